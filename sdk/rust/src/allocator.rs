//! The allocator of components built with the SDK: free lists of small blocks by size class, over
//! the system allocator.
//!
//! Every call into a component allocates the lists the host lowers into it (`cabi_realloc`) and
//! frees them when the call ends, and every answer is allocated and freed again after the host
//! has read it. Through the system allocator of `wasm32-wasip2` (wasi-libc's dlmalloc behind
//! Rust's and libc's wrappers) each of those costs a few hundred instructions; here a block of
//! at most [`LARGEST`] bytes is a pop from or a push onto its class's list. Larger blocks, and
//! blocks aligned to more than [`MIN`] bytes, go to the system allocator as before.
//!
//! A freed small block stays on its class's list rather than returning to the system allocator,
//! so a component's memory is the sum over classes of what each held at its peak. A component's
//! linear memory never shrinks anyway, and the host's memory limit bounds it as before.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// The smallest class, and the alignment every small block has.
pub const MIN: usize = 16;
/// How many classes there are: [`MIN`] bytes doubling up to [`LARGEST`].
const CLASSES: usize = 9;
/// The largest block served from a class.
pub const LARGEST: usize = MIN << (CLASSES - 1);
/// How much is taken from the system allocator at a time to carve small blocks from.
const CHUNK: usize = 64 * 1024;

/// Size-class free lists over [`System`]; see the module documentation.
pub struct SizeClasses {
    state: UnsafeCell<State>,
}

struct State {
    /// Head of each class's list of free blocks; a free block holds the address of the next.
    free: [*mut u8; CLASSES],
    /// The unused rest of the current chunk, `next..end`.
    next: *mut u8,
    end: *mut u8,
}

/// The class of blocks that serves `layout`, if a class does.
fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > MIN || layout.size() > LARGEST {
        return None;
    }
    let size = layout.size().max(MIN).next_power_of_two();
    Some((size.trailing_zeros() - MIN.trailing_zeros()) as usize)
}

impl SizeClasses {
    /// An allocator holding no memory yet.
    pub const fn new() -> Self {
        Self {
            state: UnsafeCell::new(State {
                free: [ptr::null_mut(); CLASSES],
                next: ptr::null_mut(),
                end: ptr::null_mut(),
            }),
        }
    }
}

impl Default for SizeClasses {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    /// A block of class `class`: the head of its list, else carved from the current chunk (the
    /// chunk's rest, if too small, is left unused).
    unsafe fn take(&mut self, class: usize) -> *mut u8 {
        let head = self.free[class];
        if !head.is_null() {
            // SAFETY: a block on a list holds the address of the next one.
            self.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        let size = MIN << class;
        if (self.end as usize) - (self.next as usize) < size {
            // SAFETY: CHUNK and MIN make a valid, nonzero layout.
            let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, MIN)) };
            if chunk.is_null() {
                return chunk;
            }
            self.next = chunk;
            // SAFETY: one past the end of the chunk just allocated.
            self.end = unsafe { chunk.add(CHUNK) };
        }
        let block = self.next;
        // SAFETY: `size` bytes remain in the chunk.
        self.next = unsafe { block.add(size) };
        block
    }

    /// Puts `block` at the head of class `class`'s list.
    unsafe fn give(&mut self, block: *mut u8, class: usize) {
        // SAFETY: the block is at least MIN bytes and MIN-aligned, room for an address.
        unsafe { block.cast::<*mut u8>().write(self.free[class]) };
        self.free[class] = block;
    }
}

// SAFETY: every method either serves a class from `state` or defers to `System`; the state is
// only touched from one thread (see the `Sync` impl), and nothing here reenters the allocator.
unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            // SAFETY: one thread at a time (see above).
            Some(class) => unsafe { (*self.state.get()).take(class) },
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(_) => {
                let block = unsafe { self.alloc(layout) };
                if !block.is_null() {
                    // SAFETY: the block has at least `layout.size()` bytes.
                    unsafe { block.write_bytes(0, layout.size()) };
                }
                block
            }
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match class_of(layout) {
            Some(class) => unsafe { (*self.state.get()).give(block, class) },
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller promises `new_size` makes a valid layout with the same alignment.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class_of(layout), class_of(new)) {
            (Some(old), Some(class)) if old == class => block,
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                let moved = unsafe { self.alloc(new) };
                if !moved.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and do not overlap.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

// SAFETY: compiled in only where a component has a single thread (wasm32 without the atomics
// feature), so the state is never touched from two threads.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl Sync for SizeClasses {}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn classes_double_from_the_smallest_and_stop_at_the_largest() {
        assert_eq!(class_of(layout(1, 1)), Some(0));
        assert_eq!(class_of(layout(16, 8)), Some(0));
        assert_eq!(class_of(layout(17, 8)), Some(1));
        assert_eq!(class_of(layout(LARGEST, 8)), Some(CLASSES - 1));
        assert_eq!(class_of(layout(LARGEST + 1, 8)), None);
        assert_eq!(
            class_of(layout(8, 32)),
            None,
            "over-aligned blocks go to the system"
        );
    }

    #[test]
    fn live_blocks_are_aligned_disjoint_and_keep_what_was_written() {
        let a = SizeClasses::new();
        let mut rng = sluice_policy::fixtures::Rng::new(0xA110C);
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        for round in 0..20_000u32 {
            if live.is_empty() || rng.below(3) > 0 {
                let most = if rng.below(8) == 0 { 20_000 } else { 300 };
                let size = 1 + rng.below(most) as usize;
                let align = [1, 8, 16, 64][rng.below(4) as usize];
                let l = layout(size, align);
                let p = unsafe { a.alloc(l) };
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "round {round}");
                let mark = round as u8;
                unsafe { p.write_bytes(mark, size) };
                live.push((p, l, mark));
            } else {
                let (p, l, mark) = live.swap_remove(rng.below(live.len() as u64) as usize);
                let bytes = unsafe { std::slice::from_raw_parts(p, l.size()) };
                assert!(bytes.iter().all(|&b| b == mark), "round {round}");
                unsafe { a.dealloc(p, l) };
            }
        }
        for (p, l, mark) in live {
            let bytes = unsafe { std::slice::from_raw_parts(p, l.size()) };
            assert!(bytes.iter().all(|&b| b == mark));
            unsafe { a.dealloc(p, l) };
        }
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_class() {
        let a = SizeClasses::new();
        let l = layout(40, 8);
        let p = unsafe { a.alloc(l) };
        unsafe { a.dealloc(p, l) };
        assert_eq!(unsafe { a.alloc(layout(64, 8)) }, p);
        assert_ne!(unsafe { a.alloc(layout(64, 8)) }, p);
    }

    #[test]
    fn realloc_keeps_the_contents_within_a_class_and_across_classes() {
        let a = SizeClasses::new();
        let l = layout(20, 4);
        let p = unsafe { a.alloc(l) };
        unsafe { p.write_bytes(7, 20) };
        let same = unsafe { a.realloc(p, l, 30) };
        assert_eq!(same, p, "20 and 30 bytes are one class");
        let grown = unsafe { a.realloc(same, layout(30, 4), 10_000) };
        let shrunk = unsafe { a.realloc(grown, layout(10_000, 4), 20) };
        let bytes = unsafe { std::slice::from_raw_parts(shrunk, 20) };
        assert!(bytes.iter().all(|&b| b == 7));
        let zeroed = unsafe { a.alloc_zeroed(layout(20, 4)) };
        unsafe { zeroed.write_bytes(0xFF, 20) };
        unsafe { a.dealloc(zeroed, layout(20, 4)) };
        let again = unsafe { a.alloc_zeroed(layout(20, 4)) };
        assert_eq!(again, zeroed, "the freed block comes back");
        let bytes = unsafe { std::slice::from_raw_parts(again, 20) };
        assert!(bytes.iter().all(|&b| b == 0), "and comes back zeroed");
    }
}
