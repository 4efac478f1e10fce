//! Finding where a cluster file configures something the model alone cannot say, for errors
//! found after loading (a GRES plugin refusing a node's devices).

use crate::{Location, Source};

use super::parse_config_file;

/// Where `source` configures node `node`'s GRES devices: the `Name` of the first `[[gres]]`
/// table naming it (device detail lives there), else the `Gres` value of its `[[nodes]]` table.
/// `None` when the file does not parse or configures no GRES for the node.
pub fn node_gres_location(source: Source<'_>, node: &str) -> Option<Location> {
    let file = parse_config_file(source).ok()?;
    let names = |expr: &str| {
        sluice_hostlist::Hostlist::parse_at_most(expr, sluice_hostlist::MAX_HOSTS)
            .is_ok_and(|list| list.iter().any(|n| n == node))
    };
    let at = |start: usize| {
        let skip = usize::from(matches!(
            source.text.as_bytes().get(start),
            Some(b'"' | b'\'')
        ));
        source.at(start + skip)
    };
    let from_tables = file
        .gres
        .iter()
        .find(|t| t.node_name.as_deref().is_none_or(names))
        .map(|t| at(t.name.span().start));
    from_tables.or_else(|| {
        file.nodes.iter().find_map(|spec| {
            let gres = spec.gres.as_ref()?;
            names(spec.node_name.get_ref()).then(|| at(gres.span().start))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_gres_value_is_found_by_node_name() {
        let text = "[[nodes]]\nNodeName = \"a[1-2]\"\n\n[[nodes]]\nNodeName = \"g[1-4]\"\nGres = \"gpu:h100:8\"\n";
        let at = node_gres_location(Source::new("c.toml", text), "g3").unwrap();
        assert_eq!((at.line, at.column), (6, 9));
        assert!(node_gres_location(Source::new("c.toml", text), "a1").is_none());
        let with_table = format!("{text}\n[[gres]]\nNodeName = \"g[1-2]\"\nName = \"gpu\"\n");
        let at = node_gres_location(Source::new("c.toml", &with_table), "g2").unwrap();
        assert_eq!((at.line, at.column), (10, 9));
    }
}
