//! The least-squares fit of the USL: a bounded Levenberg–Marquardt over (λ, σ, κ), each
//! step projected onto λ > 0, 0 ≤ σ ≤ 1, κ ≥ 0, a parameter the gradient pushes against its
//! bound held there, started from the linearised form and from a linear guess; the lowest
//! sum of squares wins. Three parameters, a few dozen points: a 3×3 system per step.

use super::model::{Usl, LAMBDA_MIN, MAX_ITERATIONS};

/// Least-squares USL through `(xs, ys)`: the best of the bounded LM runs from each start.
pub(super) fn fit_usl(xs: &[f64], ys: &[f64]) -> Usl {
    let runs = starts(xs, ys)
        .into_iter()
        .map(|s| levenberg_marquardt(s, xs, ys));
    let [l, s, k] = runs
        .min_by(|p, q| p.1.total_cmp(&q.1))
        .map_or([f64::NAN; 3], |b| b.0);
    // A σ or κ whose effect over the measured range is below rounding is zero.
    let b = xs.iter().fold(1.0, |a, &x| f64::max(a, x));
    let zero = |v: f64, effect: f64| if v * effect < 1e-12 { 0.0 } else { v };
    Usl::from_array([l, zero(s, b - 1.0), zero(k, b * (b - 1.0))])
}

/// Starting points: `λ = max C/N` (a lower bound of λ under the constraints) with
/// `σ = κ = 0`, and the linearised fits of `N/C` with all three terms, without κ, without σ.
fn starts(xs: &[f64], ys: &[f64]) -> Vec<[f64; 3]> {
    let per_node = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| y / x)
        .fold(LAMBDA_MIN, f64::max);
    let mut out = vec![[per_node, 0.0, 0.0]];
    let (mut m, mut v) = ([[0.0; 3]; 3], [0.0; 3]);
    for (x, y) in xs.iter().zip(ys) {
        accumulate(&mut m, &mut v, [1.0, x - 1.0, x * (x - 1.0)], x / y);
    }
    for used in [[true; 3], [true, true, false], [true, false, true]] {
        if let Some([a, b, c]) = solve(m, v, used).filter(|c| c[0] > 0.0) {
            out.push([1.0 / a, b / a, c / a]);
        }
    }
    out
}

fn project(t: [f64; 3]) -> [f64; 3] {
    [t[0].max(LAMBDA_MIN), t[1].clamp(0.0, 1.0), t[2].max(0.0)]
}

/// Adds `row` to normal equations `m`, `v` of least squares: `m += row rowᵀ`, `v += row r`.
fn accumulate(m: &mut [[f64; 3]; 3], v: &mut [f64; 3], row: [f64; 3], r: f64) {
    for i in 0..3 {
        v[i] += row[i] * r;
        for j in 0..3 {
            m[i][j] += row[i] * row[j];
        }
    }
}

/// `JᵀJ`, `Jᵀr` and `rᵀr` of the residuals `r = C(N) − y` at `t`.
fn normal_equations(t: [f64; 3], xs: &[f64], ys: &[f64]) -> ([[f64; 3]; 3], [f64; 3], f64) {
    let [l, s, k] = t;
    let (mut m, mut g, mut sse) = ([[0.0; 3]; 3], [0.0; 3], 0.0);
    for (&x, y) in xs.iter().zip(ys) {
        let d = 1.0 + s * (x - 1.0) + k * x * (x - 1.0);
        let (d_sigma, r) = (-l * x * (x - 1.0) / (d * d), l * x / d - y);
        accumulate(&mut m, &mut g, [x / d, d_sigma, d_sigma * x], r);
        sse += r * r;
    }
    (m, g, sse)
}

/// Levenberg–Marquardt from `start` with Marquardt's diagonal damping; every step is
/// projected onto the bounds, and a parameter on a bound that the gradient pushes it
/// against is held there. Returns the parameters and their sum of squares.
fn levenberg_marquardt(start: [f64; 3], xs: &[f64], ys: &[f64]) -> ([f64; 3], f64) {
    let mut t = project(start);
    let (mut m, mut g, mut sse) = normal_equations(t, xs, ys);
    let mut mu = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        let held = |i: usize| {
            let at_low = t[i] <= if i == 0 { LAMBDA_MIN } else { 0.0 };
            (at_low && g[i] > 0.0) || (i == 1 && t[i] >= 1.0 && g[i] < 0.0)
        };
        let free = [!held(0), !held(1), !held(2)];
        if free == [false; 3] || sse == 0.0 {
            break;
        }
        let mut accepted = None;
        while accepted.is_none() && mu < 1e16 {
            let mut damped = m;
            for (i, row) in damped.iter_mut().enumerate() {
                row[i] += mu * m[i][i].max(f64::MIN_POSITIVE);
            }
            let step = solve(damped, g.map(|x| -x), free).unwrap_or([0.0; 3]);
            let cand = project([t[0] + step[0], t[1] + step[1], t[2] + step[2]]);
            let next = normal_equations(cand, xs, ys);
            if next.2 < sse {
                accepted = Some((cand, next));
                mu = (mu * 0.3).max(1e-15);
            } else {
                mu *= 10.0;
            }
        }
        let Some((cand, next)) = accepted else { break };
        let progress = (sse - next.2) / sse;
        (t, (m, g, sse)) = (cand, next);
        if progress < 1e-15 {
            break;
        }
    }
    (t, sse)
}

/// Solves `m x = v`, `m` symmetric positive definite, for the unknowns marked `used` (the
/// others are 0: their rows and columns read as the identity's) by Cholesky factorisation,
/// which no scaling of the unknowns upsets; `None` when `m` is not positive definite.
fn solve(m: [[f64; 3]; 3], v: [f64; 3], used: [bool; 3]) -> Option<[f64; 3]> {
    let mut l = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..=i {
            let a = if used[i] && used[j] {
                m[i][j]
            } else {
                f64::from(u8::from(i == j))
            };
            let s = a - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            l[i][j] = if i == j { s.sqrt() } else { s / l[j][j] };
        }
        if !l[i][i].is_normal() {
            return None;
        }
    }
    let mut x = [0.0; 3];
    for i in 0..3 {
        let b = if used[i] { v[i] } else { 0.0 };
        x[i] = (b - (0..i).map(|k| l[i][k] * x[k]).sum::<f64>()) / l[i][i];
    }
    for i in (0..3).rev() {
        x[i] = (x[i] - (i + 1..3).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x.iter().all(|e| e.is_finite()).then_some(x)
}
