//! Numbers printed the way Java's `String.format("%.Nf", x)` prints them, so that text meant
//! for the Java tools matches theirs digit for digit.
//!
//! Java does not round the binary value of a double: it takes the shortest decimal that reads
//! back as the same double (the digits of `Double.toString`) and rounds that half up. Rust's
//! `{:.N}` rounds the exact binary value half to even. The two disagree on ties such as
//! 0.125 (Java `0.13`, Rust `0.12`) and on values like 1.0005, whose double lies just below the
//! tie (Java `1.001`, Rust `1.000`).

/// `x` with exactly `decimals` digits after the point, rounded as Java's `%.{decimals}f` does.
pub(crate) fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}Infinity");
    }
    // Rust's `{:e}` gives the shortest digits that read back as `x`: "3.90625e2", "1e-3", "0e0".
    let shortest = format!("{:e}", x.abs());
    let (mantissa, exponent) = shortest
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i64 = exponent.parse().expect("`{:e}` writes an integer exponent");
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    // The value is 0.d1d2d3... x 10^(exponent + 1): `point` digits stand before the point.
    let mut point = exponent + 1;
    if point < 1 {
        // Leading zeros, so that at least one digit (a zero) stands before the point.
        let zeros = usize::try_from(1 - point).expect("positive");
        digits.splice(0..0, std::iter::repeat_n(b'0', zeros));
        point = 1;
    }
    let mut point = usize::try_from(point).expect("at least 1");
    let keep = point + decimals;
    if digits.len() > keep {
        let round_up = digits[keep] >= b'5';
        digits.truncate(keep);
        if round_up && carry_one(&mut digits) {
            digits.insert(0, b'1');
            point += 1;
        }
    } else {
        digits.resize(keep, b'0');
    }
    let (int_part, fraction) = digits.split_at(point);
    let int_part = std::str::from_utf8(int_part).expect("ASCII digits");
    let int_part = match int_part.trim_start_matches('0') {
        "" => "0",
        trimmed => trimmed,
    };
    let fraction = std::str::from_utf8(fraction).expect("ASCII digits");
    if decimals == 0 {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{fraction}")
    }
}

/// Adds one in the last place of a decimal digit string; true when it carried out of the first
/// digit (all nines became zeros).
fn carry_one(digits: &mut [u8]) -> bool {
    for digit in digits.iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::fixed;

    #[test]
    fn plain_values_need_no_rounding() {
        assert_eq!(fixed(0.0, 3), "0.000");
        assert_eq!(fixed(1.0, 2), "1.00");
        assert_eq!(fixed(10.0, 3), "10.000");
        assert_eq!(fixed(123_456.789, 3), "123456.789");
        assert_eq!(fixed(0.999_023_437_5, 12), "0.999023437500");
        assert_eq!(fixed(7.0, 0), "7");
    }

    #[test]
    fn ties_round_half_up_on_the_shortest_decimal() {
        // Java: String.format("%.2f", 0.125) is "0.13"; Rust's {:.2} gives "0.12".
        assert_eq!(fixed(0.125, 2), "0.13");
        // 1.0005 is stored as 1.000499999...; Java still sees "1.0005" and rounds up.
        assert_eq!(fixed(1.0005, 3), "1.001");
        assert_eq!(fixed(390.625, 2), "390.63");
        assert_eq!(fixed(0.0015, 3), "0.002");
        assert_eq!(fixed(1.2344, 3), "1.234");
    }

    #[test]
    fn rounding_carries_through_nines_and_into_a_new_digit() {
        assert_eq!(fixed(9.9996, 3), "10.000");
        assert_eq!(fixed(99.95, 1), "100.0");
        assert_eq!(fixed(0.0996, 2), "0.10");
    }

    #[test]
    fn small_values_round_to_zero_or_to_the_last_place() {
        assert_eq!(fixed(0.000_4, 3), "0.000");
        assert_eq!(fixed(0.000_5, 3), "0.001");
        assert_eq!(fixed(1e-9, 3), "0.000");
        assert_eq!(fixed(1.111_111_111_111_111_2, 2), "1.11");
    }

    #[test]
    fn signs_and_specials_as_java_prints_them() {
        assert_eq!(fixed(-2.5, 1), "-2.5");
        assert_eq!(fixed(f64::INFINITY, 2), "Infinity");
        assert_eq!(fixed(f64::NAN, 2), "NaN");
    }
}
