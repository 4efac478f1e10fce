//! libstdc++'s `std::sort` (introsort + final insertion sort), step for step, so that candidates
//! with equal scores end up in the order Fluxion's choice leaves them (reference §6.4).
//!
//! A stable sort agrees with it up to 16 elements only; beyond that the partition steps move
//! equal elements, and which of two equal-score vertices a match takes depends on them.

/// Sorts `v` so that `less(a, b)` holds for no later `a` and earlier `b`, exactly as
/// libstdc++'s `std::sort(first, last, comp)` orders it.
pub(crate) fn sort_by<T: Default>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth, &less);
    final_insertion_sort(v, &less);
}

const THRESHOLD: usize = 16;

fn introsort_loop<T: Default>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot<T>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

fn move_median_to_first<T>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<T>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Default>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<T: Default>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            v[..=i].rotate_right(1);
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Default>(
    v: &mut [T],
    mut last: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let value = std::mem::take(&mut v[last]);
    while less(&value, &v[last - 1]) {
        v[last] = std::mem::take(&mut v[last - 1]);
        last -= 1;
    }
    v[last] = value;
}

fn heap_sort<T: Default>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = std::mem::take(&mut v[parent]);
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = std::mem::take(&mut v[last]);
        v[last] = std::mem::take(&mut v[0]);
        adjust_heap(v, 0, last, value, less);
    }
}

fn adjust_heap<T: Default>(
    v: &mut [T],
    mut hole: usize,
    len: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while child < len.saturating_sub(1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = std::mem::take(&mut v[child]);
        hole = child;
    }
    if len & 1 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = std::mem::take(&mut v[child - 1]);
        hole = child - 1;
    }
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[parent], &value) {
        v[hole] = std::mem::take(&mut v[parent]);
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::sort_by;

    #[test]
    fn sorts_like_a_sort_for_every_length_and_many_ties() {
        for n in 0..200usize {
            let mut v: Vec<(u32, usize)> = (0..n).map(|i| (((i * 7919) % 13) as u32, i)).collect();
            sort_by(&mut v, |a, b| a.0 > b.0);
            assert!(v.windows(2).all(|w| w[0].0 >= w[1].0), "n = {n}");
            let mut seen: Vec<usize> = v.iter().map(|x| x.1).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn up_to_sixteen_elements_equal_keys_keep_their_order() {
        let mut v: Vec<(u32, usize)> = (0..16).map(|i| ((i % 3) as u32, i)).collect();
        sort_by(&mut v, |a, b| a.0 < b.0);
        let mut expected: Vec<(u32, usize)> = (0..16).map(|i| ((i % 3) as u32, i)).collect();
        expected.sort_by_key(|x| x.0);
        assert_eq!(v, expected);
    }
}
