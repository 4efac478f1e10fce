//! Owns no state: a node's power flags as Slurm's bits, and their names in scontrol's order.

use serde::Serialize;

/// A node's power flags (power-save.md §1.1); the base state (IDLE, ALLOCATED, DOWN…) and DRAIN
/// live in the engine's node state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PowerFlags(u8);

impl PowerFlags {
    /// Off, in power save (`~`).
    pub const POWERED_DOWN: Self = Self(1);
    /// ResumeProgram issued, waiting for registration (`#`).
    pub const POWERING_UP: Self = Self(1 << 1);
    /// SuspendProgram issued; unusable for SuspendTimeout (`%`).
    pub const POWERING_DOWN: Self = Self(1 << 2);
    /// A power-down request, acted on once the node is idle (`!`).
    pub const POWER_DOWN: Self = Self(1 << 3);
    /// A power-up request (no symbol).
    pub const POWER_UP: Self = Self(1 << 4);
    /// Not responding (`*`); set with POWERING_UP, cleared at registration.
    pub const NOT_RESPONDING: Self = Self(1 << 5);

    /// No flag.
    pub const NONE: Self = Self(0);

    /// Whether every flag of `other` is set.
    pub fn has(self, other: Self) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// Whether any flag of `other` is set.
    pub fn any(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// Sets the flags of `other`.
    pub fn set(&mut self, other: Self) {
        self.0 |= other.0;
    }

    /// Clears the flags of `other`.
    pub fn clear(&mut self, other: Self) {
        self.0 &= !other.0;
    }

    /// Both sets of flags.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The flags that put a node in Slurm's `power_down_node_bitmap`: powered down or powering
    /// down (a node past ResumeTimeout is POWERED_DOWN too).
    pub fn in_power_down(self) -> bool {
        self.any(Self::POWERED_DOWN.with(Self::POWERING_DOWN))
    }

    /// The names of the set flags among those scontrol prints after `BASE+`, in its table order
    /// (`slurm_protocol_defs.c:131-153`) with `lead` (CLOUD, COMPLETING, DRAIN, FAIL) merged in.
    pub fn scontrol_names(self, lead: &[&'static str]) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = lead.to_vec();
        let table = [
            (Self::POWER_DOWN, "POWER_DOWN"),
            (Self::POWER_UP, "POWER_UP"),
            (Self::POWERED_DOWN, "POWERED_DOWN"),
            (Self::NOT_RESPONDING, "NOT_RESPONDING"),
            (Self::POWERING_UP, "POWERING_UP"),
            (Self::POWERING_DOWN, "POWERING_DOWN"),
        ];
        names.extend(table.iter().filter(|(f, _)| self.has(*f)).map(|(_, n)| *n));
        names
    }

    /// sinfo's one suffix symbol by Slurm's precedence: `#` POWERING_UP > `%` POWERING_DOWN >
    /// `~` POWERED_DOWN > `!` POWER_DOWN > `*` NOT_RESPONDING (`node_state_string_compact`).
    pub fn sinfo_symbol(self) -> &'static str {
        [
            (Self::POWERING_UP, "#"),
            (Self::POWERING_DOWN, "%"),
            (Self::POWERED_DOWN, "~"),
            (Self::POWER_DOWN, "!"),
            (Self::NOT_RESPONDING, "*"),
        ]
        .iter()
        .find(|(f, _)| self.has(*f))
        .map_or("", |(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::PowerFlags as F;

    #[test]
    fn sinfo_symbol_follows_slurms_precedence() {
        let booting = F::POWERING_UP.with(F::NOT_RESPONDING);
        assert_eq!(booting.sinfo_symbol(), "#");
        assert_eq!(F::POWERED_DOWN.with(F::POWER_DOWN).sinfo_symbol(), "~");
        assert_eq!(F::POWERING_DOWN.with(F::POWER_DOWN).sinfo_symbol(), "%");
        assert_eq!(F::POWER_DOWN.with(F::NOT_RESPONDING).sinfo_symbol(), "!");
        assert_eq!(F::NOT_RESPONDING.sinfo_symbol(), "*");
        assert_eq!(F::POWER_UP.sinfo_symbol(), "");
    }

    #[test]
    fn scontrol_names_are_in_table_order() {
        let f = F::POWERING_UP.with(F::NOT_RESPONDING);
        assert_eq!(
            f.scontrol_names(&["CLOUD"]),
            ["CLOUD", "NOT_RESPONDING", "POWERING_UP"]
        );
        assert_eq!(
            F::POWER_UP.with(F::POWERED_DOWN).scontrol_names(&[]),
            ["POWER_UP", "POWERED_DOWN"]
        );
    }
}
