//! The GRUG recipe: GraphML `<key>`, `<node>` and `<edge>` elements read into typed records.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use roxmltree::{Document, Node};

use crate::grug_error::GrugError;

/// Attributes a recipe vertex (`<node>`) may carry.
const NODE_ATTRIBUTES: [&str; 6] = ["root", "type", "basename", "unit", "size", "subsystem"];
/// Attributes a recipe edge may carry.
const EDGE_ATTRIBUTES: [&str; 11] = [
    "e_subsystem",
    "relation",
    "rrelation",
    "id_scope",
    "id_start",
    "id_stride",
    "gen_method",
    "multi_scale",
    "as_tgt_subsystem",
    "as_tgt_uplvl",
    "as_src_uplvl",
];

/// How a recipe edge generates the resource graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenMethod {
    /// `multi_scale` new target vertices under every generated source vertex.
    Multiply,
    /// Every existing vertex of the target's type joins the edge's subsystem under each source.
    AssociateIn,
    /// As `AssociateIn`, only for targets sharing an ancestor with the source in `as_tgt_subsystem`.
    AssociateByPathIn,
}

/// A recipe vertex: the template of a resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeVertex {
    /// The GraphML id of the `<node>`.
    pub xml_id: String,
    /// Whether the vertex is a subsystem root.
    pub root: bool,
    /// Resource type.
    pub kind: String,
    /// Name prefix of generated vertices.
    pub basename: String,
    /// Unit of `size`.
    pub unit: String,
    /// Amount held by each generated vertex.
    pub size: i64,
    /// Subsystem generated vertices get their path in.
    pub subsystem: String,
}

/// A recipe edge: how vertices of the target are generated from those of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeEdge {
    /// The GraphML id of the `<edge>` (empty if absent).
    pub xml_id: String,
    /// Index of the source recipe vertex.
    pub source: usize,
    /// Index of the target recipe vertex.
    pub target: usize,
    /// Subsystem the generated edges belong to.
    pub e_subsystem: String,
    /// Relation of the generated edges (e.g. `contains`).
    pub relation: String,
    /// Reverse relation (read, not used in generation).
    pub rrelation: String,
    /// Ancestor level ids are local to (0 = parent, <0 = no id).
    pub id_scope: i64,
    /// First id.
    pub id_start: i64,
    /// Step between ids (ignored for scope 0).
    pub id_stride: i64,
    /// Generation method.
    pub gen_method: GenMethod,
    /// Copies per source vertex for `Multiply`.
    pub multi_scale: i64,
    /// Subsystem whose paths `AssociateByPathIn` compares.
    pub as_tgt_subsystem: String,
    /// Levels dropped from the target's path before comparing.
    pub as_tgt_uplvl: i64,
    /// Levels dropped from the source's path before comparing.
    pub as_src_uplvl: i64,
    /// 1-based line of the `<edge>`.
    pub line: u32,
    /// 1-based column of the `<edge>`.
    pub column: u32,
}

/// A parsed GRUG recipe: vertices and edges in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The file the recipe came from (for error messages).
    pub file: PathBuf,
    /// Recipe vertices in document order.
    pub vertices: Vec<RecipeVertex>,
    /// Recipe edges in document order.
    pub edges: Vec<RecipeEdge>,
}

/// A declared `<key>`: the attribute it carries and its default.
struct Key {
    name: String,
    default: Option<String>,
}

/// Reading context: the file name and the document, for positions in errors.
struct Reader<'a, 'input> {
    file: &'a Path,
    doc: &'a Document<'input>,
}

impl Reader<'_, '_> {
    fn position(&self, node: Node<'_, '_>) -> (u32, u32) {
        let pos = self.doc.text_pos_at(node.range().start);
        (pos.row, pos.col)
    }

    fn invalid(&self, node: Node<'_, '_>, message: String) -> GrugError {
        let (line, column) = self.position(node);
        GrugError::Invalid {
            file: self.file.to_path_buf(),
            line,
            column,
            message,
        }
    }

    fn required_attribute<'n>(&self, node: Node<'n, '_>, name: &str) -> Result<&'n str, GrugError> {
        node.attribute(name).ok_or_else(|| {
            self.invalid(
                node,
                format!(
                    "expected attribute `{name}` on <{}>",
                    node.tag_name().name()
                ),
            )
        })
    }

    /// Reads every `<key>` into `(for, id) → Key`, refusing attribute names GRUG does not define.
    fn keys(&self, root: Node<'_, '_>) -> Result<HashMap<(String, String), Key>, GrugError> {
        let mut keys = HashMap::new();
        for key in root.children().filter(|n| n.has_tag_name_local("key")) {
            let id = self.required_attribute(key, "id")?;
            let scope = self.required_attribute(key, "for")?;
            let name = self.required_attribute(key, "attr.name")?;
            let allowed: &[&str] = match scope {
                "node" => &NODE_ATTRIBUTES,
                "edge" => &EDGE_ATTRIBUTES,
                other => {
                    return Err(self.invalid(
                        key,
                        format!(
                            "expected `for=\"node\"` or `for=\"edge\"` on <key>, found `{other}`"
                        ),
                    ));
                }
            };
            if !allowed.contains(&name) {
                let (line, column) = self.position(key);
                return Err(GrugError::UnknownAttribute {
                    file: self.file.to_path_buf(),
                    line,
                    column,
                    name: name.to_string(),
                    kind: scope.to_string(),
                    expected: allowed.join(", "),
                });
            }
            let default = key
                .children()
                .find(|n| n.has_tag_name_local("default"))
                .map(|d| d.text().unwrap_or("").trim().to_string());
            keys.insert(
                (scope.to_string(), id.to_string()),
                Key {
                    name: name.to_string(),
                    default,
                },
            );
        }
        Ok(keys)
    }

    /// The attribute values of a `<node>` or `<edge>`: declared defaults overridden by `<data>`.
    fn values<'k, 'a, 'i>(
        &self,
        element: Node<'a, 'i>,
        scope: &str,
        keys: &'k HashMap<(String, String), Key>,
    ) -> Result<HashMap<&'k str, (String, Node<'a, 'i>)>, GrugError> {
        let mut values = HashMap::new();
        for ((s, _), key) in keys {
            if let (true, Some(d)) = (s == scope, &key.default) {
                values.insert(key.name.as_str(), (d.clone(), element));
            }
        }
        for data in element.children().filter(|n| n.has_tag_name_local("data")) {
            let id = self.required_attribute(data, "key")?;
            let key = keys.get(&(scope.to_string(), id.to_string())).ok_or_else(|| {
                self.invalid(
                    data,
                    format!("expected a key declared with `for=\"{scope}\"`, found undeclared key `{id}`"),
                )
            })?;
            values.insert(
                key.name.as_str(),
                (data.text().unwrap_or("").trim().to_string(), data),
            );
        }
        Ok(values)
    }
}

trait LocalName {
    fn has_tag_name_local(&self, name: &str) -> bool;
}

impl LocalName for Node<'_, '_> {
    fn has_tag_name_local(&self, name: &str) -> bool {
        self.is_element() && self.tag_name().name() == name
    }
}

fn text_value(values: &HashMap<&str, (String, Node<'_, '_>)>, name: &str) -> String {
    values.get(name).map(|(v, _)| v.clone()).unwrap_or_default()
}

impl Recipe {
    /// Reads a recipe from a file.
    pub fn from_file(path: &Path) -> Result<Self, GrugError> {
        let text = std::fs::read_to_string(path).map_err(|source| GrugError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Reads a recipe from GraphML text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Self, GrugError> {
        let doc = Document::parse(text).map_err(|e| {
            let pos = e.pos();
            GrugError::Xml {
                file: file.to_path_buf(),
                line: pos.row,
                column: pos.col,
                message: e.to_string(),
            }
        })?;
        let reader = Reader { file, doc: &doc };
        let root = doc.root_element();
        if root.tag_name().name() != "graphml" {
            return Err(reader.invalid(
                root,
                format!("expected <graphml>, found <{}>", root.tag_name().name()),
            ));
        }
        let keys = reader.keys(root)?;
        let graph = root
            .children()
            .find(|n| n.has_tag_name_local("graph"))
            .ok_or_else(|| {
                reader.invalid(root, "expected a <graph> element in <graphml>".into())
            })?;
        let mut vertices = Vec::new();
        let mut index = HashMap::new();
        for node in graph.children().filter(|n| n.has_tag_name_local("node")) {
            let xml_id = reader.required_attribute(node, "id")?;
            let values = reader.values(node, "node", &keys)?;
            let vertex = Self::vertex(&reader, node, xml_id, &values)?;
            if index.insert(xml_id.to_string(), vertices.len()).is_some() {
                return Err(reader.invalid(
                    node,
                    format!("expected a unique node id, found `{xml_id}` twice"),
                ));
            }
            vertices.push(vertex);
        }
        let mut edges = Vec::new();
        for edge in graph.children().filter(|n| n.has_tag_name_local("edge")) {
            let values = reader.values(edge, "edge", &keys)?;
            edges.push(Self::edge(&reader, edge, &index, &values)?);
        }
        Ok(Recipe {
            file: file.to_path_buf(),
            vertices,
            edges,
        })
    }

    fn int(
        reader: &Reader<'_, '_>,
        values: &HashMap<&str, (String, Node<'_, '_>)>,
        name: &str,
        default: i64,
    ) -> Result<i64, GrugError> {
        match values.get(name) {
            None => Ok(default),
            Some((text, at)) => text.parse::<i64>().map_err(|_| {
                reader.invalid(
                    *at,
                    format!("expected an integer for `{name}`, found `{text}`"),
                )
            }),
        }
    }

    fn vertex(
        reader: &Reader<'_, '_>,
        node: Node<'_, '_>,
        xml_id: &str,
        values: &HashMap<&str, (String, Node<'_, '_>)>,
    ) -> Result<RecipeVertex, GrugError> {
        let kind = text_value(values, "type");
        if kind.is_empty() {
            return Err(reader.invalid(node, format!("expected a `type` for node `{xml_id}`")));
        }
        let size = Self::int(reader, values, "size", 1)?;
        if size < 0 {
            let at = values.get("size").map_or(node, |(_, n)| *n);
            return Err(reader.invalid(at, format!("expected a size ≥ 0, found {size}")));
        }
        let subsystem = match text_value(values, "subsystem") {
            s if s.is_empty() => "containment".to_string(),
            s => s,
        };
        Ok(RecipeVertex {
            xml_id: xml_id.to_string(),
            root: Self::int(reader, values, "root", 0)? == 1,
            kind,
            basename: text_value(values, "basename"),
            unit: text_value(values, "unit"),
            size,
            subsystem,
        })
    }

    fn edge(
        reader: &Reader<'_, '_>,
        edge: Node<'_, '_>,
        index: &HashMap<String, usize>,
        values: &HashMap<&str, (String, Node<'_, '_>)>,
    ) -> Result<RecipeEdge, GrugError> {
        let endpoint = |attr: &str| -> Result<usize, GrugError> {
            let id = reader.required_attribute(edge, attr)?;
            index.get(id).copied().ok_or_else(|| {
                reader.invalid(
                    edge,
                    format!("expected `{attr}` to name a <node>, found `{id}`"),
                )
            })
        };
        let (source, target) = (endpoint("source")?, endpoint("target")?);
        let gen_method = match values.get("gen_method").map(|(v, n)| (v.as_str(), *n)) {
            None | Some(("MULTIPLY", _)) => GenMethod::Multiply,
            Some(("ASSOCIATE_IN", _)) => GenMethod::AssociateIn,
            Some(("ASSOCIATE_BY_PATH_IN", _)) => GenMethod::AssociateByPathIn,
            Some((other, at)) => {
                return Err(reader.invalid(
                    at,
                    format!("expected MULTIPLY, ASSOCIATE_IN or ASSOCIATE_BY_PATH_IN for `gen_method`, found `{other}`"),
                ));
            }
        };
        let multi_scale = Self::int(reader, values, "multi_scale", 1)?;
        if multi_scale < 0 {
            let at = values.get("multi_scale").map_or(edge, |(_, n)| *n);
            return Err(reader.invalid(
                at,
                format!("expected a multi_scale ≥ 0, found {multi_scale}"),
            ));
        }
        let or_default = |name: &str, default: &str| match text_value(values, name) {
            s if s.is_empty() => default.to_string(),
            s => s,
        };
        let (line, column) = reader.position(edge);
        Ok(RecipeEdge {
            xml_id: edge.attribute("id").unwrap_or("").to_string(),
            source,
            target,
            e_subsystem: or_default("e_subsystem", "containment"),
            relation: or_default("relation", "contains"),
            rrelation: or_default("rrelation", "in"),
            id_scope: Self::int(reader, values, "id_scope", 0)?,
            id_start: Self::int(reader, values, "id_start", 0)?,
            id_stride: Self::int(reader, values, "id_stride", 1)?,
            gen_method,
            multi_scale,
            as_tgt_subsystem: or_default("as_tgt_subsystem", "containment"),
            as_tgt_uplvl: Self::int(reader, values, "as_tgt_uplvl", 1)?,
            as_src_uplvl: Self::int(reader, values, "as_src_uplvl", 1)?,
            line,
            column,
        })
    }
}
