//! The flat Fair Tree level's rank count: in two-lane SIMD compares in the component, where
//! each scalar turn also pays a branch and fuel, and four at a time natively.

/// How many of `keys` are greater than `own`, four at a time.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn count_above(keys: &[i64], own: i64) -> u32 {
    let mut quads = keys.chunks_exact(4);
    let mut above = 0u32;
    for q in &mut quads {
        above += u32::from(q[0] > own) + u32::from(q[1] > own);
        above += u32::from(q[2] > own) + u32::from(q[3] > own);
    }
    above + quads.remainder().iter().filter(|&&k| k > own).count() as u32
}

/// [`count_above`] in two-lane compares. A component built with SIMD throughout does worse:
/// LLVM then vectorizes the scalar loop of unsigned keys poorly, so keys are signed and this
/// is written out.
#[cfg(target_arch = "wasm32")]
pub(crate) fn count_above(keys: &[i64], own: i64) -> u32 {
    // SAFETY: wasmtime enables SIMD, and a runtime without it refuses the component at load.
    unsafe { simd::count_above(keys, own) }
}

/// The count with SIMD instructions enabled for this function alone.
#[cfg(target_arch = "wasm32")]
mod simd {
    use core::arch::wasm32::*;

    /// [`super::count_above`]: each lane of a compare is −1 where greater, so subtracting
    /// counts.
    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn count_above(keys: &[i64], own: i64) -> u32 {
        let own2 = i64x2_splat(own);
        let (mut a, mut b) = (i64x2_splat(0), i64x2_splat(0));
        let mut quads = keys.chunks_exact(4);
        for q in &mut quads {
            let p = q.as_ptr().cast::<v128>();
            // SAFETY: four in-bounds i64s are two v128s; wasm loads need no alignment.
            let (lo, hi) = unsafe { (v128_load(p), v128_load(p.add(1))) };
            a = i64x2_sub(a, i64x2_gt(lo, own2));
            b = i64x2_sub(b, i64x2_gt(hi, own2));
        }
        let lanes = i64x2_extract_lane::<0>(a)
            + i64x2_extract_lane::<1>(a)
            + i64x2_extract_lane::<0>(b)
            + i64x2_extract_lane::<1>(b);
        lanes as u32 + quads.remainder().iter().filter(|&&k| k > own).count() as u32
    }
}
