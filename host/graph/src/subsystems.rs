//! resource-query's predefined matchers (`-S/--match-subsystems`): the subsystems a match walks.

/// One subsystem of a predefined matcher and the edge filter Fluxion registers with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchSubsystem {
    /// The subsystem's name in the graph (e.g. `containment`, `power`).
    pub name: &'static str,
    /// The relation Fluxion's matcher records for it (`contains`, `connected_down`,
    /// `supplies_to` or `*`); at fd257f71 the traverser never reads it, since an edge belongs
    /// to a walk by its subsystem alone.
    pub edge_filter: &'static str,
}

const CONTAINMENT: MatchSubsystem = MatchSubsystem {
    name: "containment",
    edge_filter: "contains",
};
const IBNET: MatchSubsystem = MatchSubsystem {
    name: "ibnet",
    edge_filter: "connected_down",
};
const IBNETBW: MatchSubsystem = MatchSubsystem {
    name: "ibnetbw",
    edge_filter: "*",
};
const PFS1BW: MatchSubsystem = MatchSubsystem {
    name: "pfs1bw",
    edge_filter: "*",
};
const POWER: MatchSubsystem = MatchSubsystem {
    name: "power",
    edge_filter: "supplies_to",
};
const VIRTUAL1: MatchSubsystem = MatchSubsystem {
    name: "virtual1",
    edge_filter: "*",
};

/// resource-query's table of predefined matchers, in its order.
const PREDEFINED: [(&str, &[MatchSubsystem]); 14] = [
    ("CA", &[CONTAINMENT]),
    ("IBA", &[IBNET]),
    ("IBBA", &[IBNETBW]),
    ("PA", &[POWER]),
    ("PFS1BA", &[PFS1BW]),
    ("C+IBA", &[CONTAINMENT, IBNET]),
    ("C+IBBA", &[CONTAINMENT, IBNETBW]),
    ("C+PA", &[CONTAINMENT, POWER]),
    ("C+PFS1BA", &[CONTAINMENT, PFS1BW]),
    ("IB+IBBA", &[IBNET, IBNETBW]),
    ("C+P+IBA", &[CONTAINMENT, POWER, IBNET]),
    ("V+PFS1BA", &[VIRTUAL1, PFS1BW]),
    ("VA", &[VIRTUAL1]),
    ("ALL", &[CONTAINMENT, IBNET, IBNETBW, PFS1BW, POWER]),
];

/// A `-S/--match-subsystems` value resource-query does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown match subsystems `{0}`: expected one of CA, IBA, IBBA, PA, PFS1BA, C+IBA, C+IBBA, C+PA, C+PFS1BA, IB+IBBA, C+P+IBA, V+PFS1BA, VA, ALL (or the same in lower case)"
)]
pub struct UnknownSubsystems(pub String);

/// The subsystems of predefined matcher `name` (`CA`, `C+PA`, …, or its all-lower-case
/// spelling): the first is dominant, the others auxiliary.
pub fn predefined_subsystems(name: &str) -> Result<&'static [MatchSubsystem], UnknownSubsystems> {
    PREDEFINED
        .iter()
        .find(|(key, _)| *key == name || key.to_ascii_lowercase() == name)
        .map(|(_, subsystems)| *subsystems)
        .ok_or_else(|| UnknownSubsystems(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_dominant_then_auxiliary_subsystems() {
        let names = |n: &str| -> Vec<&str> {
            predefined_subsystems(n)
                .unwrap()
                .iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(names("C+P+IBA"), ["containment", "power", "ibnet"]);
        assert_eq!(names("c+p+iba"), ["containment", "power", "ibnet"]);
        assert_eq!(names("IB+IBBA"), ["ibnet", "ibnetbw"]);
        assert_eq!(
            names("ALL"),
            ["containment", "ibnet", "ibnetbw", "pfs1bw", "power"]
        );
        assert_eq!(
            predefined_subsystems("PA").unwrap()[0].edge_filter,
            "supplies_to"
        );
        assert_eq!(
            predefined_subsystems("IBA").unwrap()[0].edge_filter,
            "connected_down"
        );
        assert_eq!(
            predefined_subsystems("vA"),
            Err(UnknownSubsystems("vA".into()))
        );
        assert!(predefined_subsystems("C+XA").is_err());
    }
}
