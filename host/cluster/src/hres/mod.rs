//! resources.yaml (HRES) exactly as Slurm's HRES document and parser define it, with validation.

mod schema;
mod tree;

use std::collections::HashSet;

use crate::error::tidy_message;
use crate::model::{
    HresCount, HresLayer, HresMode, HresResource, License, NamedValue, Node, NodeId,
};
use crate::{ConfigError, Location, Source};

use schema::{LayerYaml, ResourceYaml};

/// Reads resources.yaml against the cluster's nodes and licenses.
///
/// Rejected: unknown keys, a count below -1, unknown or duplicate node names in a layer, a resource
/// named like a license or like another resource, two layers of one resource with the same nodes,
/// `topology` outside MODE_3, MODE_3 layers that are not a rooted uniform-depth tree of at most 16
/// levels, and a base usage above a layer's count.
pub fn parse_resources(
    source: Source<'_>,
    nodes: &[Node],
    licenses: &[License],
) -> Result<Vec<HresResource>, ConfigError> {
    let parsed: Option<Vec<ResourceYaml>> = serde_norway::from_str(source.text).map_err(|err| {
        let at = err.location().map_or_else(
            || Location::new(source.name, 1, 1),
            |l| Location::new(source.name, l.line(), l.column()),
        );
        ConfigError::Syntax {
            at,
            message: tidy_message(&strip_position(&err.to_string())),
        }
    })?;
    let index: std::collections::HashMap<&str, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let mut names = HashSet::new();
    let mut resources = Vec::new();
    for (position, yaml) in parsed.unwrap_or_default().into_iter().enumerate() {
        let locator = Locator::new(source, position);
        if licenses.iter().any(|l| l.name == yaml.resource) {
            return Err(ConfigError::invalid(
                locator.resource(),
                format!("resource `{}` named like a license", yaml.resource),
                "HRES names distinct from Licenses names",
            ));
        }
        if !names.insert(yaml.resource.clone()) {
            return Err(ConfigError::invalid(
                locator.resource(),
                format!("resource `{}` defined twice", yaml.resource),
                "unique resource names",
            ));
        }
        resources.push(build_resource(yaml, &index, &locator)?);
    }
    Ok(resources)
}

/// serde_norway appends " at line L column C" to messages; the location is reported separately.
fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn build_resource(
    yaml: ResourceYaml,
    index: &std::collections::HashMap<&str, u32>,
    locator: &Locator<'_>,
) -> Result<HresResource, ConfigError> {
    let mode = match yaml.mode.as_str() {
        "MODE_1" => HresMode::Mode1,
        "MODE_2" => HresMode::Mode2,
        "MODE_3" => HresMode::Mode3,
        other => {
            return Err(ConfigError::invalid(
                locator.key("mode:"),
                format!("mode `{other}`"),
                "MODE_1, MODE_2 or MODE_3",
            ));
        }
    };
    if yaml.topology.is_some() && mode != HresMode::Mode3 {
        return Err(ConfigError::invalid(
            locator.key("topology:"),
            format!("topology with {}", mode.as_str()),
            "topology only on MODE_3 resources",
        ));
    }
    if yaml.layers.is_empty() {
        return Err(ConfigError::invalid(
            locator.resource(),
            "a resource without layers",
            "at least one layer",
        ));
    }
    let mut layers = Vec::with_capacity(yaml.layers.len());
    for (layer_index, layer) in yaml.layers.into_iter().enumerate() {
        layers.push(build_layer(layer, index, &locator.layer(layer_index))?);
    }
    let mut seen: Vec<&[NodeId]> = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        if seen.contains(&layer.nodes.as_slice()) {
            return Err(ConfigError::invalid(
                locator.layer(i).at,
                format!("a second layer over `{}`", layer.node_exprs.join(",")),
                "each layer of a resource over a different node set",
            ));
        }
        seen.push(&layer.nodes);
    }
    if mode == HresMode::Mode3 {
        tree::link_tree(&mut layers, |i| locator.layer(i).at)?;
    }
    tree::set_base_usage(&mut layers, mode, |i| locator.layer(i).at)?;
    Ok(HresResource {
        name: yaml.resource,
        mode,
        topology: yaml.topology,
        variables: yaml
            .variables
            .into_iter()
            .map(|v| NamedValue {
                name: v.name,
                value: v.value,
            })
            .collect(),
        layers,
    })
}

fn build_layer(
    layer: LayerYaml,
    index: &std::collections::HashMap<&str, u32>,
    at: &LayerLocator<'_>,
) -> Result<HresLayer, ConfigError> {
    let count = match layer.count {
        -1 => HresCount::Infinite,
        c if (0..=i64::from(u32::MAX)).contains(&c) => HresCount::Count(c as u32),
        c => {
            return Err(ConfigError::invalid(
                at.key("count:"),
                format!("count {c}"),
                "0 to 4294967295, or -1 for infinite",
            ));
        }
    };
    if layer.nodes.is_empty() {
        return Err(ConfigError::invalid(
            at.key("nodes:"),
            "a layer without nodes",
            "at least one hostlist",
        ));
    }
    let mut nodes = Vec::new();
    for expr in &layer.nodes {
        let expr_at = at.source.find(expr, at.offset);
        let list = sluice_hostlist::Hostlist::parse_at_most(expr, sluice_hostlist::MAX_HOSTS)
            .map_err(|source| ConfigError::Hostlist {
                at: expr_at.clone(),
                expr: expr.clone(),
                source,
            })?;
        if list.len() > index.len() as u64 {
            return Err(ConfigError::invalid(
                expr_at,
                format!("{} node names", list.len()),
                "only configured nodes",
            ));
        }
        for name in list.iter() {
            let id = index.get(name.as_str()).ok_or_else(|| {
                ConfigError::invalid(
                    expr_at.clone(),
                    format!("node `{name}`"),
                    "a node of the cluster",
                )
            })?;
            nodes.push(NodeId(*id));
        }
    }
    nodes.sort();
    nodes.dedup();
    Ok(HresLayer {
        node_exprs: layer.nodes,
        nodes,
        count,
        base: layer
            .base
            .into_iter()
            .map(|b| NamedValue {
                name: b.name,
                value: b.value,
            })
            .collect(),
        base_usage: 0,
        parent: None,
        depth: 0,
    })
}

/// Finds where the `position`-th resource and its keys are in the text, for error messages.
struct Locator<'a> {
    source: Source<'a>,
    offset: usize,
}

impl<'a> Locator<'a> {
    fn new(source: Source<'a>, position: usize) -> Self {
        let offset = source
            .text
            .match_indices("resource:")
            .nth(position)
            .map_or(0, |(i, _)| i);
        Self { source, offset }
    }

    fn resource(&self) -> Location {
        self.source.at(self.offset)
    }

    fn key(&self, key: &str) -> Location {
        self.source.find(key, self.offset)
    }

    fn layer(&self, layer: usize) -> LayerLocator<'a> {
        let end = self.source.text[self.offset + 1..]
            .find("resource:")
            .map_or(self.source.text.len(), |i| self.offset + 1 + i);
        let offset = self.source.text[self.offset..end]
            .match_indices("nodes:")
            .nth(layer)
            .map_or(self.offset, |(i, _)| self.offset + i);
        LayerLocator {
            source: self.source,
            offset,
            at: self.source.at(offset),
        }
    }
}

/// Where one layer starts.
struct LayerLocator<'a> {
    source: Source<'a>,
    offset: usize,
    at: Location,
}

impl LayerLocator<'_> {
    fn key(&self, key: &str) -> Location {
        self.source.find(key, self.offset)
    }
}
