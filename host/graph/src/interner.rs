//! Interned resource-type and subsystem names, numbered in insertion order as Fluxion does.

use std::collections::HashMap;

/// Types Fluxion interns at start-up, before any graph is read (reference §0.1 item 5);
/// their order is the order of type sets and planner columns.
pub const BUILTIN_TYPES: [&str; 10] = [
    "cluster",
    "core",
    "socket",
    "gpu",
    "node",
    "rack",
    "slot",
    "xor_slot",
    "ssd",
    "storage_node",
];

/// A table of strings numbered by first insertion; a name's number is its sort key.
#[derive(Debug, Clone, Default)]
pub struct Interner {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
}

impl Interner {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// A table pre-filled with Fluxion's built-in resource types, in their interning order.
    pub fn with_builtin_types() -> Self {
        let mut table = Self::new();
        for name in BUILTIN_TYPES {
            table.intern(name);
        }
        table
    }

    /// The number of `name`, adding it at the end if it is new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 distinct names");
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// The number of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The name numbered `id`.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// How many names the table holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table holds no name.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Heap bytes held, counting each name twice (list and index) plus the index slots.
    pub fn memory_bytes(&self) -> usize {
        let text: usize = self.names.iter().map(|n| n.len()).sum();
        2 * text
            + self.names.capacity() * std::mem::size_of::<Box<str>>()
            + self.ids.capacity() * (std::mem::size_of::<Box<str>>() + 4 + 1)
    }
}
