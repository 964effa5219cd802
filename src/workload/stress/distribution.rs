//! Numeric distributions written as cassandra-stress writes them: `fixed(1)`,
//! `uniform(1..10)`, `gaussian(1..100,2)`, `gaussian(1..100,50,10)`, `exp(1..100)`,
//! `extreme(1..100,1.5)`, each optionally inverted with a leading `~`, and ratios such as
//! `uniform(1..10)/10`.
//!
//! Semantics follow cassandra-stress (tools/stress, `OptionDistribution`):
//! - bounds take the suffixes k, m and b (×1000 each): `uniform(1..100B)`;
//! - `gaussian(min..max)` has its mean in the middle and σ = (max − min)/2/3; a second
//!   argument replaces the 3 (σ-widths from the middle to an edge); with three arguments they
//!   are the mean and σ; draws outside the bounds are clamped to them;
//! - `exp(min..max)` and `extreme(min..max,shape)` (a Weibull) are offsets from `min`, scaled
//!   so that the top of the range has a chance of about 1/√(max − min), and clamped to `max`;
//! - `~` mirrors a distribution in its range: a value v becomes max − (v − min), so `~exp`
//!   favours the top of the range;
//! - names are case-insensitive; aliases: `gauss`, `normal`, `norm`, `extr`, `weibull`.
//!
//! A [`Distribution`] draws from a caller's random-number generator, so the caller decides
//! how draws repeat.

use std::fmt;

use rand::Rng;

use crate::workload::common::generators::clamped_normal;

/// The shape of a [`Distribution`] within its bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Always the same value (min = max).
    Fixed,
    /// Every value of the range equally likely.
    Uniform,
    /// A normal distribution, clamped to the range.
    Gaussian {
        /// Its mean.
        mean: f64,
        /// Its standard deviation.
        stdev: f64,
    },
    /// An exponential offset from min, clamped to max.
    Exp {
        /// The mean of the offset.
        mean: f64,
    },
    /// A Weibull (extreme value) offset from min, clamped to max.
    Extreme {
        /// The Weibull shape: below 1, most draws are near min with a long tail.
        shape: f64,
        /// The Weibull scale, derived from the range.
        scale: f64,
    },
}

/// A distribution of whole numbers in `min..=max`, as cassandra-stress defines them.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// Its text, as parsed (kept for messages and for config.json).
    text: String,
    min: u64,
    max: u64,
    shape: Shape,
    /// Mirrored in its range (`~`).
    inverted: bool,
}

/// A distribution divided by a constant: `uniform(1..10)/10` draws 0.1 to 1.0. The draws
/// are clamped to 0..=1, as they are chances.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    text: String,
    distribution: Distribution,
    divisor: f64,
}

impl Distribution {
    /// Parses `[~]NAME(ARGS)`; the error says what would be right.
    pub fn parse(text: &str) -> Result<Distribution, String> {
        let spec = text.trim();
        let (inverted, rest) = match spec.strip_prefix('~') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, spec),
        };
        let open = rest.find('(').filter(|_| rest.ends_with(')')).ok_or_else(|| {
            format!("'{spec}' is not a distribution: write NAME(ARGS), e.g. uniform(1..10), fixed(1), ~exp(1..100)")
        })?;
        let name = rest[..open].trim().to_ascii_lowercase();
        let args: Vec<&str> = rest[open + 1..rest.len() - 1]
            .split(',')
            .map(str::trim)
            .collect();
        let arity = |n: &[usize], usage: &str| -> Result<(), String> {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(format!("'{spec}': {name} takes {usage}"))
            }
        };
        let range = || range_of(spec, args[0]);
        let float = |i: usize| -> Result<f64, String> {
            args[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("'{spec}': '{}' is not a number", args[i]))
        };
        let (min, max, shape) = match name.as_str() {
            "fixed" => {
                arity(&[1], "one value, e.g. fixed(100)")?;
                let v = parse_count(args[0])
                    .ok_or_else(|| format!("'{spec}': '{}' is not a whole number (suffixes k, m, b)", args[0]))?;
                (v, v, Shape::Fixed)
            }
            "uniform" => {
                arity(&[1], "a range, e.g. uniform(1..10)")?;
                let (min, max) = range()?;
                (min, max, Shape::Uniform)
            }
            "gaussian" | "gauss" | "normal" | "norm" => {
                arity(
                    &[1, 2, 3],
                    "a range, then optionally σ-widths to the edge or a mean and σ, e.g. gaussian(1..100,2)",
                )?;
                let (min, max) = range()?;
                let (mean, stdev) = if args.len() == 3 {
                    (float(1)?, float(2)?)
                } else {
                    let widths = if args.len() == 2 { float(1)? } else { 3.0 };
                    if widths <= 0.0 {
                        return Err(format!("'{spec}': the σ-widths must be above 0"));
                    }
                    ((min as f64 + max as f64) / 2.0, (max - min) as f64 / 2.0 / widths)
                };
                if stdev < 0.0 {
                    return Err(format!("'{spec}': σ must not be negative"));
                }
                (min, max, Shape::Gaussian { mean, stdev })
            }
            "exp" => {
                arity(&[1], "a range, e.g. exp(1..100)")?;
                let (min, max) = range()?;
                // The scale at which the top of the range keeps a chance of about
                // 1/sqrt(range): every value stays reachable without a flat shape.
                let mean = (max - min) as f64 / tail_quantile(max - min);
                (min, max, Shape::Exp { mean })
            }
            "extreme" | "extr" | "weibull" => {
                arity(&[2], "a range and a shape, e.g. extreme(1..100,1.5)")?;
                let (min, max) = range()?;
                let shape = float(1)?;
                if shape <= 0.0 {
                    return Err(format!("'{spec}': the shape must be above 0"));
                }
                let scale = (max - min) as f64 / tail_quantile(max - min).powf(1.0 / shape);
                (min, max, Shape::Extreme { shape, scale })
            }
            _ => {
                return Err(format!(
                    "'{spec}': unknown distribution '{name}': use fixed, uniform, gaussian, exp or extreme (aliases gauss, normal, norm, extr, weibull)"
                ))
            }
        };
        Ok(Distribution {
            text: spec.to_string(),
            min,
            max,
            shape,
            inverted,
        })
    }

    /// A fixed value.
    pub fn fixed(value: u64) -> Distribution {
        Distribution {
            text: format!("fixed({value})"),
            min: value,
            max: value,
            shape: Shape::Fixed,
            inverted: false,
        }
    }

    /// The smallest value it can draw.
    pub fn min(&self) -> u64 {
        self.min
    }

    /// The largest value it can draw.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Its shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Mirrored in its range.
    pub fn is_inverted(&self) -> bool {
        self.inverted
    }

    /// A draw in `min..=max`, continuous (the shapes before rounding).
    pub fn sample_f64<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let v = self.unmirrored(rng);
        if self.inverted {
            self.max as f64 - (v - self.min as f64)
        } else {
            v
        }
    }

    /// A whole-number draw in `min..=max`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let v = match self.shape {
            Shape::Fixed => self.min,
            // Every whole value equally likely, the top one included.
            Shape::Uniform => rng.random_range(self.min..=self.max),
            // The continuous draw, rounded down, as cassandra-stress does.
            _ => (self.unmirrored(rng) as u64).clamp(self.min, self.max),
        };
        if self.inverted {
            self.max - (v - self.min)
        } else {
            v
        }
    }

    /// A continuous draw of the shape, clamped to the range, not mirrored.
    fn unmirrored<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let (min, max) = (self.min as f64, self.max as f64);
        let v = match self.shape {
            Shape::Fixed => min,
            Shape::Uniform => min + rng.random::<f64>() * (max - min),
            Shape::Gaussian { mean, stdev } => {
                clamped_normal(rng, mean, |z| stdev * z, |v| v, (min, max))
            }
            Shape::Exp { mean } => min + mean * standard_exponential(rng),
            Shape::Extreme { shape, scale } => {
                min + scale * standard_exponential(rng).powf(1.0 / shape)
            }
        };
        v.clamp(min, max)
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Ratio {
    /// Parses `DISTRIBUTION/DIVISOR`, e.g. `fixed(1)/1000` or `uniform(1..10)/10`.
    pub fn parse(text: &str) -> Result<Ratio, String> {
        let spec = text.trim();
        let (dist, divisor) = spec.rsplit_once('/').ok_or_else(|| {
            format!("'{spec}' is not a ratio: write DISTRIBUTION/DIVISOR, e.g. fixed(1)/10 or uniform(1..10)/10")
        })?;
        let divisor = parse_count(divisor.trim())
            .filter(|&d| d > 0)
            .ok_or_else(|| {
                format!(
                    "'{spec}': the divisor '{}' must be a whole number above 0",
                    divisor.trim()
                )
            })?;
        Ok(Ratio {
            text: spec.to_string(),
            distribution: Distribution::parse(dist)?,
            divisor: divisor as f64,
        })
    }

    /// A chance in 0..=1.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        (self.distribution.sample_f64(rng) / self.divisor).clamp(0.0, 1.0)
    }

    /// The largest chance it can draw.
    pub fn max(&self) -> f64 {
        (self.distribution.max() as f64 / self.divisor).min(1.0)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `-ln(1/sqrt(range))`: the quantile of a unit exponential at which the chance of a larger
/// draw is 1/sqrt(range). Ranges of 0 or 1 have no tail to shape; 1 keeps them finite.
fn tail_quantile(range: u64) -> f64 {
    (0.5 * (range as f64).ln()).max(1.0)
}

/// `min..max` with suffixes.
fn range_of(spec: &str, arg: &str) -> Result<(u64, u64), String> {
    let (a, b) = arg
        .split_once("..")
        .ok_or_else(|| format!("'{spec}': '{arg}' is not a range: write MIN..MAX, e.g. 1..100"))?;
    let bound = |s: &str| {
        parse_count(s.trim_start_matches('.').trim()).ok_or_else(|| {
            format!(
                "'{spec}': '{}' is not a whole number of 0 or more (suffixes k, m, b)",
                s.trim()
            )
        })
    };
    let (min, max) = (bound(a)?, bound(b)?);
    if min > max {
        return Err(format!("'{spec}': the range {min}..{max} is empty"));
    }
    Ok((min, max))
}

/// A whole number with cassandra-stress's suffixes: k (10³), m (10⁶), b (10⁹), any case.
pub fn parse_count(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (digits, factor) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1_000),
        'm' => (&text[..text.len() - 1], 1_000_000),
        'b' => (&text[..text.len() - 1], 1_000_000_000),
        _ => (text.as_str(), 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(factor)
}

/// A unit exponential draw (inverse of its distribution function).
fn standard_exponential<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    -(1.0 - rng.random::<f64>()).ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    const N: usize = 200_000;

    fn draws(text: &str) -> Vec<u64> {
        let d = Distribution::parse(text).unwrap();
        let mut rng = SmallRng::seed_from_u64(11);
        (0..N).map(|_| d.sample(&mut rng)).collect()
    }

    fn mean(v: &[u64]) -> f64 {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }

    fn share(v: &[u64], f: impl Fn(u64) -> bool) -> f64 {
        v.iter().filter(|&&x| f(x)).count() as f64 / v.len() as f64
    }

    #[test]
    fn fixed_always_gives_its_value_and_takes_suffixes() {
        assert!(draws("fixed(7)").iter().all(|&x| x == 7));
        assert!(draws("FIXED(2k)").iter().all(|&x| x == 2000));
        assert_eq!(
            Distribution::parse("fixed(100B)").unwrap().max(),
            100_000_000_000
        );
        assert_eq!(Distribution::parse("fixed(1M)").unwrap().min(), 1_000_000);
    }

    #[test]
    fn uniform_covers_its_range_evenly() {
        let v = draws("uniform(1..10)");
        assert_eq!(*v.iter().min().unwrap(), 1);
        assert_eq!(*v.iter().max().unwrap(), 10);
        assert!((mean(&v) - 5.5).abs() < 0.05, "{}", mean(&v));
        for k in 1..=10 {
            assert!((share(&v, |x| x == k) - 0.1).abs() < 0.01);
        }
    }

    #[test]
    fn gaussian_centres_with_the_given_spread_and_stays_in_bounds() {
        // σ = (100 − 1)/2/3 = 16.5 around 50.5: about 68% within ±σ.
        let v = draws("gaussian(1..100)");
        assert!(v.iter().all(|&x| (1..=100).contains(&x)));
        assert!((mean(&v) - 50.0).abs() < 0.5, "{}", mean(&v));
        let within = share(&v, |x| (34..=67).contains(&x));
        assert!((within - 0.68).abs() < 0.03, "{within}");
        // Two σ-widths to the edge: σ = 24.75, so the edges (clamped) collect ~2.3% each.
        let v = draws("gaussian(1..100,2)");
        let at_edges = share(&v, |x| x == 1 || x == 100);
        assert!((at_edges - 0.045).abs() < 0.01, "{at_edges}");
        // An explicit mean and σ.
        let v = draws("normal(0..1000,200,10)");
        assert!((mean(&v) - 199.5).abs() < 0.5, "{}", mean(&v));
    }

    #[test]
    fn exp_favours_the_bottom_and_reaches_the_top() {
        let v = draws("exp(1..100)");
        assert!(v.iter().all(|&x| (1..=100).contains(&x)));
        // The mean offset is 99 / (ln(99)/2) ≈ 43.1; offsets past 99 are clamped to it, so
        // the top keeps a chance of e^(-99/43.1) = 1/sqrt(99) ≈ 0.1005.
        let top = share(&v, |x| x == 100);
        assert!((top - 0.1005).abs() < 0.005, "{top}");
        let expected_mean = 1.0 + 43.1 * (1.0 - 0.1005);
        assert!((mean(&v) - expected_mean).abs() < 0.5, "{}", mean(&v));
        // Below the clamp, the density falls: 1-10 (offsets below 10) is far likelier than 81-90.
        let (low, high) = (
            share(&v, |x| x <= 10),
            share(&v, |x| (81..=90).contains(&x)),
        );
        assert!(
            (low - 0.207).abs() < 0.01 && (high - 0.032).abs() < 0.005,
            "{low} {high}"
        );
    }

    #[test]
    fn extreme_is_skewed_by_its_shape() {
        let heavy = draws("extreme(1..1000,0.5)");
        let light = draws("extr(1..1000,3)");
        assert!(heavy.iter().chain(&light).all(|&x| (1..=1000).contains(&x)));
        let median = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v[v.len() / 2]
        };
        // A shape below 1 puts most draws near the bottom; above 1, a hump higher up.
        assert!(median(&heavy) < 100, "{}", median(&heavy));
        assert!(median(&light) > 200, "{}", median(&light));
        assert!(share(&heavy, |x| x < 50) > share(&light, |x| x < 50) * 3.0);
    }

    #[test]
    fn inversion_mirrors_each_shape_in_its_range() {
        for text in [
            "exp(1..100)",
            "extreme(1..100,1.5)",
            "gaussian(1..100,50,5)",
            "uniform(5..9)",
        ] {
            let plain = draws(text);
            let inverted = draws(&format!("~{text}"));
            // The same generator draws: each inverted value mirrors the plain one.
            for (p, i) in plain.iter().zip(&inverted) {
                let (min, max) = {
                    let d = Distribution::parse(text).unwrap();
                    (d.min(), d.max())
                };
                assert_eq!(*i, max - (p - min), "{text}");
            }
        }
        let v = draws("~exp(1..100)");
        assert!(share(&v, |x| x > 50) > 0.65, "~exp favours the top");
        assert!(Distribution::parse("~EXP(1..100)").unwrap().is_inverted());
        assert!(draws("~fixed(3)").iter().all(|&x| x == 3));
    }

    #[test]
    fn continuous_draws_stay_in_bounds() {
        let d = Distribution::parse("~gaussian(10..20)").unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        assert!((0..10_000).all(|_| (10.0..=20.0).contains(&d.sample_f64(&mut rng))));
    }

    #[test]
    fn ratios_divide_and_clamp() {
        let r = Ratio::parse("uniform(1..10)/10").unwrap();
        let mut rng = SmallRng::seed_from_u64(2);
        let v: Vec<f64> = (0..N).map(|_| r.sample(&mut rng)).collect();
        assert!(v.iter().all(|x| (0.1..=1.0).contains(x)));
        assert!((v.iter().sum::<f64>() / N as f64 - 0.55).abs() < 0.01);
        assert_eq!(Ratio::parse("fixed(1)/1000").unwrap().max(), 0.001);
        assert_eq!(Ratio::parse("fixed(5)/1").unwrap().max(), 1.0);
        assert!(Ratio::parse("fixed(1)")
            .unwrap_err()
            .contains("DISTRIBUTION/DIVISOR"));
        assert!(Ratio::parse("fixed(1)/0").unwrap_err().contains("above 0"));
    }

    #[test]
    fn bad_text_says_what_would_be_right() {
        let err = |t: &str| Distribution::parse(t).unwrap_err();
        assert!(err("uniform").contains("NAME(ARGS)"));
        assert!(err("zipf(1..10)").contains("unknown distribution 'zipf'"));
        assert!(err("uniform(1..x)").contains("'x' is not a whole number"));
        assert!(err("uniform(10..1)").contains("empty"));
        assert!(err("uniform(1,10)").contains("takes a range"));
        assert!(err("fixed(1..2)").contains("not a whole number"));
        assert!(err("extreme(1..10)").contains("a range and a shape"));
        assert!(err("extreme(1..10,0)").contains("shape must be above 0"));
        assert!(err("gaussian(1..10,a)").contains("'a' is not a number"));
        assert!(err("uniform(-1..10)").contains("0 or more"));
    }
}
