//! The compact resource graph: a struct-of-arrays vertex arena with CSR out-edges per subsystem.

use std::collections::HashMap;

use crate::interner::Interner;

/// A vertex's index in the arena, which is its creation order (Fluxion's `uniq_id`).
pub type VertexId = u32;

/// A subsystem's index in [`ResourceGraph::subsystems`].
pub type SubsystemId = u16;

/// Marks a vertex with no path in a subsystem (it is not a member).
const NO_PATH: u32 = u32::MAX;
/// Marks a vertex whose path in a subsystem is `/` + its name.
const ROOT_PATH: u32 = u32::MAX - 1;
/// Marks a vertex whose path in a subsystem is kept as text in `frozen_paths`, because the
/// path of its parent changed after it was generated (Fluxion copies paths at creation).
const FROZEN_PATH: u32 = u32::MAX - 2;

/// Out-edges of one subsystem in compressed sparse rows: the edges of vertex `v` are
/// `targets[offsets[v]..offsets[v + 1]]`, in creation order.
#[derive(Debug, Clone, Default)]
struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<VertexId>,
    relations: Vec<u32>,
}

/// A resource graph generated from a recipe: every vertex's type, name, id, rank, size, unit and
/// path in each subsystem, and the out-edges of each subsystem.
#[derive(Debug, Clone)]
pub struct ResourceGraph {
    types: Interner,
    strings: Interner,
    subsystems: Interner,
    type_of: Vec<u32>,
    basename_of: Vec<u32>,
    id_of: Vec<i64>,
    rank_of: Vec<i32>,
    size_of: Vec<i64>,
    unit_of: Vec<u32>,
    path_parent: Vec<Vec<u32>>,
    frozen_paths: HashMap<(SubsystemId, VertexId), Box<str>>,
    adjacency: Vec<Adjacency>,
}

/// The fields a new vertex is created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexSpec<'a> {
    /// Resource type, e.g. `core`.
    pub kind: &'a str,
    /// Name prefix; the name is the basename followed by the id unless the id is -1.
    pub basename: &'a str,
    /// Numeric id, or -1 for none.
    pub id: i64,
    /// Broker rank (node vertices), or -1.
    pub rank: i32,
    /// Amount of the resource held by the vertex (e.g. 2 for a 2 GB memory vertex).
    pub size: i64,
    /// Unit of `size`, empty when unitless.
    pub unit: &'a str,
}

/// Assembles a [`ResourceGraph`]: vertices and paths are set directly, edges are gathered and
/// laid out per subsystem by [`GraphBuilder::finish`].
#[derive(Debug, Clone)]
pub struct GraphBuilder {
    graph: ResourceGraph,
    edges: Vec<(SubsystemId, VertexId, VertexId, u32)>,
    /// Per subsystem, whether some vertex's path was built on this one.
    path_children: Vec<Vec<bool>>,
    /// The last (kind, basename, unit) texts interned and their numbers: generation adds
    /// vertices in runs from one recipe vertex, so most lookups repeat the previous one.
    last_texts: Option<LastTexts>,
    /// Each `(source, target)` pair's edge, built on the first association (only then can an
    /// edge repeat a pair: a multiplied edge always leads to a new vertex).
    pairs: Option<HashMap<(VertexId, VertexId), usize>>,
}

/// A vertex's kind, basename and unit texts and the numbers they were interned as.
type LastTexts = (Box<str>, Box<str>, Box<str>, VertexTexts);

/// A vertex's kind (a type number), basename and unit (string numbers), interned.
pub(crate) type VertexTexts = [u32; 3];

impl Default for GraphBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GraphBuilder {
    /// An empty graph whose type table starts with Fluxion's built-in types.
    pub fn new() -> Self {
        GraphBuilder {
            graph: ResourceGraph {
                types: Interner::with_builtin_types(),
                strings: Interner::new(),
                subsystems: Interner::new(),
                type_of: Vec::new(),
                basename_of: Vec::new(),
                id_of: Vec::new(),
                rank_of: Vec::new(),
                size_of: Vec::new(),
                unit_of: Vec::new(),
                path_parent: Vec::new(),
                frozen_paths: HashMap::new(),
                adjacency: Vec::new(),
            },
            edges: Vec::new(),
            path_children: Vec::new(),
            last_texts: None,
            pairs: None,
        }
    }

    /// The graph built so far, for reading names and paths during generation.
    pub fn graph(&self) -> &ResourceGraph {
        &self.graph
    }

    /// The id of subsystem `name`, registering it if new.
    pub fn subsystem(&mut self, name: &str) -> SubsystemId {
        let id = self.graph.subsystems.intern(name);
        let n = self.graph.type_of.len();
        while self.graph.path_parent.len() <= id as usize {
            self.graph.path_parent.push(vec![NO_PATH; n]);
            self.path_children.push(vec![false; n]);
        }
        SubsystemId::try_from(id).expect("fewer than 65,536 subsystems")
    }

    /// Registers a resource type so that it is known even without a vertex of it.
    pub fn intern_type(&mut self, kind: &str) -> u32 {
        self.graph.types.intern(kind)
    }

    /// Adds a vertex with no path in any subsystem and returns its id.
    pub fn add_vertex(&mut self, spec: VertexSpec<'_>) -> VertexId {
        let texts = match &self.last_texts {
            Some((k, b, u, ids))
                if **k == *spec.kind && **b == *spec.basename && **u == *spec.unit =>
            {
                *ids
            }
            _ => {
                let ids = self.intern_texts(spec.kind, spec.basename, spec.unit);
                self.last_texts = Some((
                    spec.kind.into(),
                    spec.basename.into(),
                    spec.unit.into(),
                    ids,
                ));
                ids
            }
        };
        self.add_vertex_texts(texts, spec.id, spec.rank, spec.size)
    }

    /// Interns a vertex's kind, basename and unit, for [`GraphBuilder::add_vertex_texts`].
    pub(crate) fn intern_texts(&mut self, kind: &str, basename: &str, unit: &str) -> VertexTexts {
        [
            self.graph.types.intern(kind),
            self.graph.strings.intern(basename),
            self.graph.strings.intern(unit),
        ]
    }

    /// [`GraphBuilder::add_vertex`] with its texts interned already: a generator that makes
    /// many vertices from one description interns its texts once.
    pub(crate) fn add_vertex_texts(
        &mut self,
        texts: VertexTexts,
        id: i64,
        rank: i32,
        size: i64,
    ) -> VertexId {
        let g = &mut self.graph;
        let v = VertexId::try_from(g.type_of.len()).expect("fewer than 2^32 - 2 vertices");
        let [kind, basename, unit] = texts;
        g.type_of.push(kind);
        g.basename_of.push(basename);
        g.id_of.push(id);
        g.rank_of.push(rank);
        g.size_of.push(size);
        g.unit_of.push(unit);
        for parents in &mut g.path_parent {
            parents.push(NO_PATH);
        }
        for children in &mut self.path_children {
            children.push(false);
        }
        v
    }

    /// Sets `v`'s path in `subsystem` to `parent`'s path there followed by `v`'s name, or to
    /// `/name` when `parent` is `None` or has no path in that subsystem. Paths already built on
    /// `v`'s old path keep it, as Fluxion's copied strings do.
    pub fn set_path(&mut self, subsystem: SubsystemId, v: VertexId, parent: Option<VertexId>) {
        let s = subsystem as usize;
        if self.path_children[s][v as usize] {
            self.freeze_children(subsystem, v);
            self.path_children[s][v as usize] = false;
        }
        let parents = &mut self.graph.path_parent[s];
        parents[v as usize] = match parent {
            Some(p) if parents[p as usize] != NO_PATH => {
                self.path_children[s][p as usize] = true;
                p
            }
            _ => ROOT_PATH,
        };
    }

    /// Stores as text the paths of the vertices whose path is built on `v`'s, before it changes.
    fn freeze_children(&mut self, subsystem: SubsystemId, v: VertexId) {
        let children: Vec<VertexId> = self.graph.path_parent[subsystem as usize]
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p == v)
            .map(|(u, _)| u as VertexId)
            .collect();
        for u in children {
            let path = self.graph.path(subsystem, u).expect("a child has a path");
            self.graph.frozen_paths.insert((subsystem, u), path.into());
            self.graph.path_parent[subsystem as usize][u as usize] = FROZEN_PATH;
        }
    }

    /// Adds an edge `src → dst` in `subsystem` with the given relation (e.g. `contains`).
    pub fn add_edge(
        &mut self,
        subsystem: SubsystemId,
        src: VertexId,
        dst: VertexId,
        relation: &str,
    ) {
        let relation = self.graph.strings.intern(relation);
        if let Some(pairs) = &mut self.pairs {
            pairs.insert((src, dst), self.edges.len());
        }
        self.edges.push((subsystem, src, dst, relation));
    }

    /// Adds an edge `src → dst` in `subsystem` as Fluxion's GRUG reader associates vertices:
    /// when the pair already has an edge (in any subsystem), that edge moves to `subsystem`
    /// and keeps its place among `src`'s out-edges (Fluxion keeps one edge per pair and
    /// overwrites its subsystem). Returns whether a new edge was added.
    pub fn associate_edge(
        &mut self,
        subsystem: SubsystemId,
        src: VertexId,
        dst: VertexId,
        relation: &str,
    ) -> bool {
        let edges = &self.edges;
        let pairs = self.pairs.get_or_insert_with(|| {
            edges
                .iter()
                .enumerate()
                .map(|(i, &(_, s, d, _))| ((s, d), i))
                .collect()
        });
        let relation = self.graph.strings.intern(relation);
        match pairs.get(&(src, dst)) {
            Some(&i) => {
                self.edges[i].0 = subsystem;
                self.edges[i].3 = relation;
                false
            }
            None => {
                pairs.insert((src, dst), self.edges.len());
                self.edges.push((subsystem, src, dst, relation));
                true
            }
        }
    }

    /// Lays out the gathered edges per subsystem, keeping each vertex's edges in creation order.
    pub fn finish(mut self) -> ResourceGraph {
        let n = self.graph.type_of.len();
        let subsystems = self.graph.subsystems.len();
        let mut adjacency = vec![Adjacency::default(); subsystems];
        let mut counts = vec![vec![0u32; n + 1]; subsystems];
        for &(s, src, _, _) in &self.edges {
            counts[s as usize][src as usize + 1] += 1;
        }
        for (s, mut offsets) in counts.into_iter().enumerate() {
            for i in 1..=n {
                offsets[i] += offsets[i - 1];
            }
            let total = offsets[n] as usize;
            adjacency[s].targets = vec![0; total];
            adjacency[s].relations = vec![0; total];
            adjacency[s].offsets = offsets;
        }
        let mut cursor: Vec<Vec<u32>> = adjacency.iter().map(|a| a.offsets[..n].to_vec()).collect();
        for (s, src, dst, relation) in std::mem::take(&mut self.edges) {
            let slot = &mut cursor[s as usize][src as usize];
            adjacency[s as usize].targets[*slot as usize] = dst;
            adjacency[s as usize].relations[*slot as usize] = relation;
            *slot += 1;
        }
        self.graph.adjacency = adjacency;
        // Generation grows the arena by doubling; a loaded graph is read-only in shape.
        let g = &mut self.graph;
        g.type_of.shrink_to_fit();
        g.basename_of.shrink_to_fit();
        g.id_of.shrink_to_fit();
        g.rank_of.shrink_to_fit();
        g.size_of.shrink_to_fit();
        g.unit_of.shrink_to_fit();
        for parents in &mut g.path_parent {
            parents.shrink_to_fit();
        }
        self.graph
    }
}

impl ResourceGraph {
    /// How many vertices the graph holds.
    pub fn vertex_count(&self) -> usize {
        self.type_of.len()
    }

    /// The resource-type table: built-in types first, then the graph's in reading order.
    pub fn types(&self) -> &Interner {
        &self.types
    }

    /// The subsystem names, in order of first appearance in the recipe.
    pub fn subsystems(&self) -> &Interner {
        &self.subsystems
    }

    /// The id of subsystem `name`, if the graph has it.
    pub fn subsystem_id(&self, name: &str) -> Option<SubsystemId> {
        self.subsystems.get(name).map(|id| id as SubsystemId)
    }

    /// `v`'s resource type.
    pub fn kind(&self, v: VertexId) -> &str {
        self.types.name(self.type_of[v as usize])
    }

    /// `v`'s resource type as its interning number (the order Fluxion sorts types in).
    pub fn kind_id(&self, v: VertexId) -> u32 {
        self.type_of[v as usize]
    }

    /// `v`'s basename (its name without the numeric id).
    pub fn basename(&self, v: VertexId) -> &str {
        self.strings.name(self.basename_of[v as usize])
    }

    /// `v`'s name: basename followed by the id, or the basename alone when the id is -1.
    pub fn name(&self, v: VertexId) -> String {
        let mut name = String::new();
        self.push_name(v, &mut name);
        name
    }

    /// Appends `v`'s name to `out`: the writers print one per matched vertex, and building a
    /// `String` for each was a tenth of a one-core match.
    pub fn push_name(&self, v: VertexId, out: &mut String) {
        out.push_str(self.basename(v));
        let id = self.id_of[v as usize];
        if id != -1 {
            out.push_str(itoa::Buffer::new().format(id));
        }
    }

    /// `v`'s numeric id (-1 for none).
    pub fn id(&self, v: VertexId) -> i64 {
        self.id_of[v as usize]
    }

    /// `v`'s rank: node vertices are numbered 0, 1, … in creation order, others have -1.
    pub fn rank(&self, v: VertexId) -> i32 {
        self.rank_of[v as usize]
    }

    /// `v`'s size (amount of the resource it holds).
    pub fn size(&self, v: VertexId) -> i64 {
        self.size_of[v as usize]
    }

    /// `v`'s unit, empty when unitless.
    pub fn unit(&self, v: VertexId) -> &str {
        self.strings.name(self.unit_of[v as usize])
    }

    /// Whether `v` is a member of `subsystem` (has a path there).
    pub fn is_member(&self, subsystem: SubsystemId, v: VertexId) -> bool {
        self.path_parent[subsystem as usize][v as usize] != NO_PATH
    }

    /// `v`'s path in `subsystem`, e.g. `/tiny0/rack0/node1/socket0/core17`.
    pub fn path(&self, subsystem: SubsystemId, v: VertexId) -> Option<String> {
        let parents = self.path_parent.get(subsystem as usize)?;
        let mut chain = Vec::new();
        let mut at = v;
        let mut path = String::new();
        loop {
            match parents[at as usize] {
                NO_PATH => return None,
                ROOT_PATH => {
                    chain.push(at);
                    break;
                }
                FROZEN_PATH => {
                    path.push_str(&self.frozen_paths[&(subsystem, at)]);
                    break;
                }
                parent => {
                    chain.push(at);
                    at = parent;
                }
            }
            // Parent links only point to earlier-set paths; the bound keeps a bad chain finite.
            if chain.len() > parents.len() {
                return None;
            }
        }
        for &u in chain.iter().rev() {
            path.push('/');
            path.push_str(&self.name(u));
        }
        Some(path)
    }

    /// The vertices whose path in `subsystem` is `/` + their own name, in creation order.
    pub fn roots(&self, subsystem: SubsystemId) -> Vec<VertexId> {
        self.path_parent[subsystem as usize]
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == ROOT_PATH)
            .map(|(v, _)| v as VertexId)
            .collect()
    }

    /// `v`'s out-edge targets in `subsystem`, in creation order.
    pub fn out_edges(&self, subsystem: SubsystemId, v: VertexId) -> &[VertexId] {
        let a = &self.adjacency[subsystem as usize];
        &a.targets[a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize]
    }

    /// The indices of `v`'s out-edges in `subsystem`'s edge arrays, in creation order; an index
    /// names an edge for [`ResourceGraph::edge_target`].
    pub fn out_edge_range(&self, subsystem: SubsystemId, v: VertexId) -> std::ops::Range<usize> {
        let a = &self.adjacency[subsystem as usize];
        a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize
    }

    /// The target of the edge with index `e` in `subsystem`.
    pub fn edge_target(&self, subsystem: SubsystemId, e: usize) -> VertexId {
        self.adjacency[subsystem as usize].targets[e]
    }

    /// The relation (e.g. `contains`) of `v`'s out-edges in `subsystem`, parallel to
    /// [`ResourceGraph::out_edges`].
    pub fn out_relations(&self, subsystem: SubsystemId, v: VertexId) -> impl Iterator<Item = &str> {
        let a = &self.adjacency[subsystem as usize];
        a.relations[a.offsets[v as usize] as usize..a.offsets[v as usize + 1] as usize]
            .iter()
            .map(|&r| self.strings.name(r))
    }

    /// How many edges `subsystem` holds.
    pub fn edge_count(&self, subsystem: SubsystemId) -> usize {
        self.adjacency[subsystem as usize].targets.len()
    }

    /// All vertices of type `kind`, in creation order.
    pub fn vertices_of_type(&self, kind: &str) -> Vec<VertexId> {
        let Some(t) = self.types.get(kind) else {
            return Vec::new();
        };
        (0..self.type_of.len() as VertexId)
            .filter(|&v| self.type_of[v as usize] == t)
            .collect()
    }

    /// How many vertices have type `kind`.
    pub fn count_of_type(&self, kind: &str) -> usize {
        self.types
            .get(kind)
            .map_or(0, |t| self.type_of.iter().filter(|&&x| x == t).count())
    }

    /// Heap and inline bytes held by the graph (vector capacities and interned text).
    pub fn memory_bytes(&self) -> usize {
        fn cap<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let arena = cap(&self.type_of)
            + cap(&self.basename_of)
            + cap(&self.id_of)
            + cap(&self.rank_of)
            + cap(&self.size_of)
            + cap(&self.unit_of);
        let paths: usize = self.path_parent.iter().map(cap).sum::<usize>()
            + cap(&self.path_parent)
            + self
                .frozen_paths
                .values()
                .map(|p| p.len() + std::mem::size_of::<(SubsystemId, VertexId, Box<str>)>() + 1)
                .sum::<usize>();
        let edges: usize = self
            .adjacency
            .iter()
            .map(|a| cap(&a.offsets) + cap(&a.targets) + cap(&a.relations))
            .sum::<usize>()
            + cap(&self.adjacency);
        std::mem::size_of::<Self>()
            + arena
            + paths
            + edges
            + self.types.memory_bytes()
            + self.strings.memory_bytes()
            + self.subsystems.memory_bytes()
    }
}
