//! `udiv` of shaders/pool.wgsl: floor(n / d) without integer division
//! (llvmpipe divides one lane at a time). The shader claims exactness for
//! n < 2^30 and 1 <= d < 2^24 *whatever the GPU's f32 rounding*: WGSL lets
//! integer→f32 conversion round either way and f32 division be off by
//! 2.5 ULP. A GPU test cannot show that (lavapipe divides exactly), so this
//! test runs a line-for-line Rust transcription under every such rounding —
//! and first checks that the shader still says what is transcribed.

use tpb_emu::device::gpu::kernels::POOL_WGSL;

/// The shader's text of `udiv`, which `udiv` below transcribes.
const WGSL_UDIV: &str = "fn udiv(n: u32, d: u32) -> u32 {
    let fd = f32(d);
    var q = u32(f32(n) / fd);
    q = bitcast<u32>(bitcast<i32>(q) + i32(floor(f32(bitcast<i32>(n - q * d)) / fd)));
    let r = bitcast<i32>(n - q * d);
    return q + select(0u, 1u, r >= i32(d)) - select(0u, 1u, r < 0);
}";

/// How a GPU may round: each integer→f32 conversion toward either
/// neighbour, each division off by up to 3 ULP (more than WGSL's 2.5).
#[derive(Clone, Copy)]
struct Rounding {
    up: [bool; 2],
    ulps: [i32; 2],
}

fn nudge(x: f32, ulps: i32) -> f32 {
    if x == 0.0 || ulps == 0 {
        return x;
    }
    // Moving the bits moves the magnitude; for negative x that is the other way.
    let step = if x > 0.0 { ulps } else { -ulps };
    f32::from_bits((x.to_bits() as i32 + step) as u32)
}

/// An integer to f32, rounded toward the neighbour `up` asks for when inexact.
fn to_f32(v: i64, up: bool) -> f32 {
    let near = v as f32;
    let exact = near as i64 == v;
    if exact || ((near as i64) > v) == up {
        return near;
    }
    nudge(near, if (near > 0.0) == up { 1 } else { -1 })
}

fn udiv(n: u32, d: u32, r: Rounding) -> u32 {
    let fd = d as f32; // d < 2^24: exact
    let div = |a: f32, i: usize| nudge(a / fd, r.ulps[i]);
    // WGSL's f32 → integer conversions saturate, as Rust's `as` does.
    let mut q = div(to_f32(n as i64, r.up[0]), 0) as u32;
    let r0 = n.wrapping_sub(q.wrapping_mul(d)) as i32;
    q = (q as i32).wrapping_add(div(to_f32(r0 as i64, r.up[1]), 1).floor() as i32) as u32;
    let rem = n.wrapping_sub(q.wrapping_mul(d)) as i32;
    q.wrapping_add((rem >= d as i32) as u32)
        .wrapping_sub((rem < 0) as u32)
}

fn roundings() -> impl Iterator<Item = Rounding> {
    (0..4).flat_map(|ups| {
        (-3..=3).flat_map(move |a| {
            (-3..=3).map(move |b| Rounding {
                up: [ups & 1 == 1, ups & 2 == 2],
                ulps: [a, b],
            })
        })
    })
}

#[test]
fn the_transcription_is_the_shader_text() {
    assert!(
        POOL_WGSL.contains(WGSL_UDIV),
        "shaders/pool.wgsl's udiv changed: update WGSL_UDIV and the transcription"
    );
}

#[test]
fn udiv_is_exact_under_any_allowed_rounding() {
    let mut rng = fastrand::Rng::with_seed(0xD1_7001);
    let mut cases: Vec<(u32, u32)> = Vec::new();
    for _ in 0..20_000 {
        // Divisors across all magnitudes; quotients near integers are the hard ones.
        let d = 1 + (rng.u32(..1 << 24) >> rng.u32(0..24)).min((1 << 24) - 2);
        let k = rng.u32(..(1 << 30) / d);
        for n in [
            k * d,
            (k * d).saturating_sub(1),
            k * d + 1,
            rng.u32(..1 << 30),
        ] {
            if n < 1 << 30 {
                cases.push((n, d));
            }
        }
    }
    cases.extend([
        (0, 1),
        ((1 << 30) - 1, 1),
        ((1 << 30) - 1, 3),
        ((1 << 30) - 1, (1 << 24) - 1),
    ]);
    for &(n, d) in &cases {
        for r in roundings() {
            let q = udiv(n, d, r);
            assert_eq!(
                q,
                n / d,
                "udiv({n}, {d}) with conversions up={:?}, division off by {:?} ulp",
                r.up,
                r.ulps
            );
        }
    }
}

#[test]
fn the_corrections_are_needed() {
    // Without rounding error the first estimate is nearly always right; with
    // it, some cases need each correction step: the test above exercises them.
    let r = Rounding {
        up: [true, false],
        ulps: [3, -3],
    };
    let fd = |d: u32| d as f32;
    let wrong_estimates = (1u32..2000)
        .flat_map(|d| (0..50u32).map(move |k| (k * 1_000_003 % (1 << 30), d)))
        .filter(|&(n, d)| (nudge(to_f32(n as i64, r.up[0]) / fd(d), r.ulps[0]) as u32) != n / d)
        .count();
    assert!(wrong_estimates > 1000, "{wrong_estimates}");
}
