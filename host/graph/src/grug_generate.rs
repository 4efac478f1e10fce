//! Generating the resource graph from a GRUG recipe, as resource-query's depth-first emitter does.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use crate::graph::{GraphBuilder, ResourceGraph, SubsystemId, VertexId, VertexTexts};
use crate::grug_error::GrugError;
use crate::grug_recipe::{GenMethod, Recipe, RecipeEdge};

/// Bounds on what a recipe may generate, so that a hostile file cannot exhaust memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrugLimits {
    /// Most vertices a recipe may generate.
    pub max_vertices: usize,
    /// Most edges a recipe may generate.
    pub max_edges: usize,
    /// Most distinct subsystems, since each costs a few bytes per vertex.
    pub max_subsystems: usize,
}

impl Default for GrugLimits {
    /// 32 Mi vertices and edges (about twice the 16,384 × 64-core graph of the issue) and 16
    /// subsystems (flux-sched's recipes use at most 5).
    fn default() -> Self {
        GrugLimits {
            max_vertices: 32 << 20,
            max_edges: 32 << 20,
            max_subsystems: 16,
        }
    }
}

/// Reads a GRUG file and generates its resource graph under the default limits.
pub fn read_grug(path: &Path) -> Result<ResourceGraph, GrugError> {
    generate(&Recipe::from_file(path)?, GrugLimits::default())
}

/// Generates the resource graph of a parsed recipe.
pub fn generate(recipe: &Recipe, limits: GrugLimits) -> Result<ResourceGraph, GrugError> {
    if !recipe.vertices.iter().any(|v| v.root) {
        return Err(GrugError::MissingRoot {
            file: recipe.file.clone(),
        });
    }
    let declared: std::collections::BTreeSet<&str> = recipe
        .vertices
        .iter()
        .map(|v| v.subsystem.as_str())
        .collect();
    if let Some(edge) = recipe
        .edges
        .iter()
        .find(|e| !declared.contains(e.e_subsystem.as_str()))
    {
        // Fluxion would generate edges in a subsystem without a root, which no matcher can
        // walk; naming the edge is more useful than a graph that silently differs.
        return Err(GrugError::Invalid {
            file: recipe.file.clone(),
            line: edge.line,
            column: edge.column,
            message: format!(
                "edge `{}` names subsystem `{}`, which no <node> declares (expected one of {})",
                edge.xml_id,
                edge.e_subsystem,
                declared.iter().copied().collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let subsystems: std::collections::HashSet<&str> = recipe
        .vertices
        .iter()
        .map(|v| v.subsystem.as_str())
        .chain(recipe.edges.iter().map(|e| e.e_subsystem.as_str()))
        .collect();
    if subsystems.len() > limits.max_subsystems {
        return Err(GrugError::TooLarge {
            file: recipe.file.clone(),
            what: "subsystems",
            limit: limits.max_subsystems,
        });
    }
    let mut emitter = Emitter::new(recipe, limits);
    emitter.walk()?;
    Ok(emitter.builder.finish())
}

/// `path` without its last `levels` components, keeping the trailing `/` ("/a/b/c", 1 → "/a/b/").
fn path_prefix(path: &str, levels: i64) -> &str {
    let mut prefix = path;
    for _ in 0..levels {
        let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
        match trimmed.rfind('/') {
            Some(i) => prefix = &trimmed[..=i],
            None => return "",
        }
    }
    prefix
}

/// Visit state of a recipe vertex in the depth-first walk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Color {
    White,
    Gray,
    Black,
}

/// The walk's state: generated vertices per recipe vertex, the scale stack `gen_id` reads, and
/// the indexes generation consults.
struct Emitter<'r> {
    recipe: &'r Recipe,
    limits: GrugLimits,
    builder: GraphBuilder,
    out: Vec<Vec<usize>>,
    generated: Vec<Vec<VertexId>>,
    hier_scales: VecDeque<i64>,
    /// Per type number, the vertices generated of it.
    by_type: Vec<Vec<VertexId>>,
    /// Per recipe vertex, its texts once interned and whether it is a `node`.
    texts: Vec<Option<(VertexTexts, bool)>>,
    roots: HashMap<SubsystemId, VertexId>,
    vertex_subsystem: Vec<SubsystemId>,
    edge_subsystem: Vec<SubsystemId>,
    next_rank: i32,
    edges: usize,
}

impl<'r> Emitter<'r> {
    fn new(recipe: &'r Recipe, limits: GrugLimits) -> Self {
        let mut builder = GraphBuilder::new();
        // Types and subsystems are numbered in reading order, which fixes later sort orders.
        for v in &recipe.vertices {
            builder.intern_type(&v.kind);
        }
        let vertex_subsystem = recipe
            .vertices
            .iter()
            .map(|v| builder.subsystem(&v.subsystem))
            .collect();
        let edge_subsystem = recipe
            .edges
            .iter()
            .map(|e| builder.subsystem(&e.e_subsystem))
            .collect();
        let mut out = vec![Vec::new(); recipe.vertices.len()];
        for (i, e) in recipe.edges.iter().enumerate() {
            out[e.source].push(i);
        }
        Emitter {
            recipe,
            limits,
            builder,
            out,
            generated: vec![Vec::new(); recipe.vertices.len()],
            hier_scales: VecDeque::new(),
            by_type: Vec::new(),
            texts: vec![None; recipe.vertices.len()],
            roots: HashMap::new(),
            vertex_subsystem,
            edge_subsystem,
            next_rank: 0,
            edges: 0,
        }
    }

    /// Depth-first over the recipe from vertex 0, then from each unvisited vertex in order.
    fn walk(&mut self) -> Result<(), GrugError> {
        let n = self.recipe.vertices.len();
        let mut color = vec![Color::White; n];
        for start in 0..n {
            if color[start] != Color::White {
                continue;
            }
            color[start] = Color::Gray;
            let mut stack = vec![(start, 0usize)];
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                if let Some(&e) = self.out[u].get(*next) {
                    *next += 1;
                    let v = self.recipe.edges[e].target;
                    match color[v] {
                        Color::White => {
                            self.tree_edge(e)?;
                            color[v] = Color::Gray;
                            stack.push((v, 0));
                        }
                        Color::Gray => {
                            let edge = &self.recipe.edges[e];
                            return Err(GrugError::Cycle {
                                file: self.recipe.file.clone(),
                                line: edge.line,
                                column: edge.column,
                                edge: edge.xml_id.clone(),
                            });
                        }
                        Color::Black => {}
                    }
                } else {
                    self.hier_scales.pop_front();
                    color[u] = Color::Black;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn tree_edge(&mut self, e: usize) -> Result<(), GrugError> {
        let recipe = self.recipe;
        let edge = &recipe.edges[e];
        let (s, t) = (edge.source, edge.target);
        if self.recipe.vertices[s].root && self.generated[s].is_empty() {
            let root = self.emit_root(s)?;
            self.generated[s].push(root);
        }
        let sources = std::mem::take(&mut self.generated[s]);
        self.generated[t] = Vec::new();
        let result = match edge.gen_method {
            GenMethod::Multiply => self.multiply(e, &sources),
            GenMethod::AssociateIn | GenMethod::AssociateByPathIn => self.associate(e, &sources),
        };
        // A self-loop is refused as a cycle before it gets here, so `s != t`.
        self.generated[s] = sources;
        result
    }

    fn emit_root(&mut self, r: usize) -> Result<VertexId, GrugError> {
        let subsystem = self.vertex_subsystem[r];
        if let Some(&root) = self.roots.get(&subsystem) {
            return Ok(root);
        }
        let root = self.new_vertex(r, 0)?;
        self.builder.set_path(subsystem, root, None);
        self.roots.insert(subsystem, root);
        Ok(root)
    }

    fn new_vertex(&mut self, r: usize, id: i64) -> Result<VertexId, GrugError> {
        if self.builder.graph().vertex_count() >= self.limits.max_vertices {
            return Err(GrugError::TooLarge {
                file: self.recipe.file.clone(),
                what: "vertices",
                limit: self.limits.max_vertices,
            });
        }
        let spec = &self.recipe.vertices[r];
        let (texts, is_node) = match self.texts[r] {
            Some(known) => known,
            None => {
                let texts = self
                    .builder
                    .intern_texts(&spec.kind, &spec.basename, &spec.unit);
                self.texts[r] = Some((texts, spec.kind == "node"));
                (texts, spec.kind == "node")
            }
        };
        let rank = if is_node {
            self.next_rank += 1;
            self.next_rank - 1
        } else {
            -1
        };
        let v = self.builder.add_vertex_texts(texts, id, rank, spec.size);
        let kind = texts[0] as usize;
        if self.by_type.len() <= kind {
            self.by_type.resize_with(kind + 1, Vec::new);
        }
        self.by_type[kind].push(v);
        Ok(v)
    }

    fn add_edge(&mut self, e: usize, src: VertexId, dst: VertexId) -> Result<(), GrugError> {
        if self.edges >= self.limits.max_edges {
            return Err(GrugError::TooLarge {
                file: self.recipe.file.clone(),
                what: "edges",
                limit: self.limits.max_edges,
            });
        }
        self.edges += 1;
        let relation = &self.recipe.edges[e].relation;
        if self.recipe.edges[e].gen_method == GenMethod::Multiply {
            self.builder
                .add_edge(self.edge_subsystem[e], src, dst, relation);
        } else if !self
            .builder
            .associate_edge(self.edge_subsystem[e], src, dst, relation)
        {
            self.edges -= 1;
        }
        Ok(())
    }

    /// The id of the `i`-th of `scale` copies under the `j`-th source (reference §2.3).
    fn gen_id(&self, edge: &RecipeEdge, i: i64, scale: i64, j: i64) -> i64 {
        match edge.id_scope {
            s if s < 0 => -1,
            0 => edge.id_start.wrapping_add(i),
            s => {
                // Hostile recipes may overflow; ids wrap (as Fluxion's C ints do) and never panic.
                let levels = (s as usize).min(self.hier_scales.len());
                let wrap = self
                    .hier_scales
                    .iter()
                    .take(levels)
                    .fold(1i64, |acc, &x| acc.wrapping_mul(x));
                let local = if wrap <= 0 { j } else { j % wrap };
                edge.id_start
                    .wrapping_add(local.wrapping_mul(scale).wrapping_mul(edge.id_stride))
                    .wrapping_add(i.wrapping_mul(edge.id_stride))
            }
        }
    }

    fn multiply(&mut self, e: usize, sources: &[VertexId]) -> Result<(), GrugError> {
        let recipe = self.recipe;
        let edge = &recipe.edges[e];
        let t = edge.target;
        let subsystem = self.vertex_subsystem[t];
        for (j, &src) in sources.iter().enumerate() {
            for i in 0..edge.multi_scale {
                let id = self.gen_id(edge, i, edge.multi_scale, j as i64);
                let v = self.new_vertex(t, id)?;
                self.builder.set_path(subsystem, v, Some(src));
                self.add_edge(e, src, v)?;
                self.generated[t].push(v);
            }
        }
        self.hier_scales.push_front(edge.multi_scale);
        Ok(())
    }

    fn associate(&mut self, e: usize, sources: &[VertexId]) -> Result<(), GrugError> {
        let recipe = self.recipe;
        let edge = &recipe.edges[e];
        let t = edge.target;
        let subsystem = self.edge_subsystem[e];
        let targets = self
            .builder
            .graph()
            .types()
            .get(&self.recipe.vertices[t].kind)
            .and_then(|kind| self.by_type.get(kind as usize))
            .cloned()
            .unwrap_or_default();
        let compare_in = self.builder.graph().subsystem_id(&edge.as_tgt_subsystem);
        let path_in = |graph: &ResourceGraph, v: VertexId| -> String {
            compare_in
                .and_then(|s| graph.path(s, v))
                .unwrap_or_default()
        };
        let by_path = edge.gen_method == GenMethod::AssociateByPathIn;
        // Paths are only written in `subsystem`; when the compared one differs, target prefixes
        // stay fixed for this edge and matching is a look-up instead of a scan of every pair.
        let grouped: Option<HashMap<String, Vec<VertexId>>> =
            (by_path && compare_in != Some(subsystem)).then(|| {
                let mut groups: HashMap<String, Vec<VertexId>> = HashMap::new();
                for &tgt in &targets {
                    let path = path_in(self.builder.graph(), tgt);
                    let prefix = path_prefix(&path, edge.as_tgt_uplvl).to_string();
                    groups.entry(prefix).or_default().push(tgt);
                }
                groups
            });
        for &src in sources {
            let src_path = path_in(self.builder.graph(), src);
            let src_prefix = path_prefix(&src_path, edge.as_src_uplvl).to_string();
            let candidates: &[VertexId] = match &grouped {
                Some(groups) => groups.get(&src_prefix).map_or(&[], Vec::as_slice),
                None => &targets,
            };
            for &tgt in candidates {
                if by_path && grouped.is_none() {
                    let tgt_path = path_in(self.builder.graph(), tgt);
                    if path_prefix(&tgt_path, edge.as_tgt_uplvl) != src_prefix {
                        continue;
                    }
                }
                self.builder.set_path(subsystem, tgt, Some(src));
                self.add_edge(e, src, tgt)?;
                self.generated[t].push(tgt);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::path_prefix;

    #[test]
    fn path_prefix_drops_components_and_keeps_the_slash() {
        assert_eq!(path_prefix("/a/b/c", 0), "/a/b/c");
        assert_eq!(path_prefix("/a/b/c", 1), "/a/b/");
        assert_eq!(path_prefix("/a/b/c", 2), "/a/");
        assert_eq!(path_prefix("/a/b/c", 3), "/");
        assert_eq!(path_prefix("", 1), "");
    }
}
