package ref

import (
	"math"
	"strconv"
)

// maxIntegerDigits bounds the integer forms AppendIntegerForms writes: a
// number that names a file is an id or a timestamp, far shorter, and a
// bound keeps "1e999999999" from becoming a billion zeros.
const maxIntegerDigits = 40

// AppendIntegerForms appends to dst the integer forms of num, a number in
// decimal text (JSON's, PostgreSQL's numeric or float text, SQLite's REAL),
// each after a space, and returns the extended slice: nothing when num is
// not such a number, its value is no integer, or its forms are num itself.
//
// A runtime names a file by a number's value, not by how a document spelled
// it: {"media_id": 1234567890.0}, 1.23456789e9 and a numeric 1234567890.000
// all name 1234567890.jpg, which the words of their text do not hold. The
// forms are
//   - the exact value, when it is an integer: the digits num says, without
//     a fraction, an exponent or leading zeros ("-1234567890" for
//     "-1.23456789e9"), at most maxIntegerDigits of them;
//   - the value as a JavaScript number prints it, when it is an integer
//     below 1e21 (strconv.FormatFloat(v, 'f', -1, 64)): a runtime that read
//     the number into a float64 names the file by that, and beyond 2^53 it
//     is not the exact value ("12345678901234567890" reads as
//     12345678901234567000; "1234567890.0000000000000001" as 1234567890).
//
// Zero is "0", whatever its sign: -0 is no id, and JavaScript prints it "0".
// The words are separated by spaces, as the retention rule reads them.
//
// num is untrusted: the work is linear in its length, and nothing is
// allocated beyond what is appended to dst.
func AppendIntegerForms(dst, num []byte) []byte {
	if plainInteger(num) {
		return dst
	}
	d, ok := parseDecimal(num)
	if !ok {
		return dst
	}
	start := len(dst)
	exact := -1 // where the exact form starts in dst
	if d.integral() && d.intDigits() <= maxIntegerDigits {
		exact = len(dst) + 1
		dst = d.appendInteger(append(dst, ' '))
		if string(dst[exact:]) == string(num) {
			dst, exact = dst[:start], -1
		}
	}
	// The float64 a runtime reads: only for a value below 1e21, which
	// JavaScript prints in digits. A decimal of at most 15 significant digits
	// in the range of normal floats reads as the float64 that prints back as
	// those digits (DBL_DIG), so that its JavaScript form is its exact form,
	// or none when it is no integer: ParseFloat is left out for those, most
	// numbers. Below that range a value may read as 0.
	if d.first < 0 || d.point()-d.first > 21 || d.sigDigits() <= 15 && d.point() >= -300 {
		return dst
	}
	v, err := strconv.ParseFloat(view(num), 64)
	if err != nil || v != math.Trunc(v) || math.Abs(v) >= 1e21 {
		return dst // a fraction, or printed with an exponent
	}
	if v == 0 {
		v = 0 // not -0
	}
	js := len(dst) + 1
	dst = strconv.AppendFloat(append(dst, ' '), v, 'f', -1, 64)
	if string(dst[js:]) == string(num) || exact >= 0 && string(dst[js:]) == string(dst[exact:js-1]) {
		dst = dst[:js-1]
	}
	return dst
}

// plainInteger reports whether num is an integer in plain digits, short
// enough to be exact as a float64: most numbers, which have no other form.
func plainInteger(num []byte) bool {
	digits := num
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && len(num) > 1 {
		return false // "0" only, not "-0" nor "007"
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decimal is a number in decimal text: the digits of its integer part and
// of its fraction, as written, and its exponent. Its value is
// 0.<ip><fp> × 10^(len(ip)+exp).
type decimal struct {
	neg    bool
	ip, fp []byte
	exp    int64 // bounded by maxExponent
	// first and last are the positions of the first and last digit other
	// than 0 among ip and fp together; first is -1 for zero.
	first, last int64
}

// maxExponent bounds the exponent parseDecimal keeps: beyond it, the integer
// would have far more than maxIntegerDigits digits, or the value has a
// fraction, however long the input. Ten times it still fits an int64, and so
// does the point's position, its sum with an input's length.
const maxExponent = 1 << 59

// parseDecimal parses [+-]digits[.digits][(e|E)[+-]digits], with digits on at
// least one side of the point. Hexadecimal, NaN and infinities are not
// decimal numbers: no source writes a name that way.
func parseDecimal(num []byte) (d decimal, ok bool) {
	i := 0
	if i < len(num) && (num[i] == '-' || num[i] == '+') {
		d.neg = num[i] == '-'
		i++
	}
	from := i
	for i < len(num) && '0' <= num[i] && num[i] <= '9' {
		i++
	}
	d.ip = num[from:i]
	if i < len(num) && num[i] == '.' {
		i++
		from = i
		for i < len(num) && '0' <= num[i] && num[i] <= '9' {
			i++
		}
		d.fp = num[from:i]
	}
	if len(d.ip)+len(d.fp) == 0 {
		return d, false
	}
	if i < len(num) && (num[i] == 'e' || num[i] == 'E') {
		i++
		neg := false
		if i < len(num) && (num[i] == '-' || num[i] == '+') {
			neg = num[i] == '-'
			i++
		}
		from = i
		for i < len(num) && '0' <= num[i] && num[i] <= '9' {
			if d.exp <= maxExponent {
				d.exp = d.exp*10 + int64(num[i]-'0')
			}
			i++
		}
		if i == from {
			return d, false
		}
		d.exp = min(d.exp, maxExponent)
		if neg {
			d.exp = -d.exp
		}
	}
	if i != len(num) {
		return d, false
	}
	d.first, d.last = -1, -1
	for k := range int64(len(d.ip) + len(d.fp)) {
		if d.digit(k) != '0' {
			d.first = k
			break
		}
	}
	if d.first >= 0 {
		for k := int64(len(d.ip)+len(d.fp)) - 1; ; k-- {
			if d.digit(k) != '0' {
				d.last = k
				break
			}
		}
	}
	return d, true
}

// digit is the k-th digit of ip and fp together.
func (d *decimal) digit(k int64) byte {
	if k < int64(len(d.ip)) {
		return d.ip[k]
	}
	return d.fp[k-int64(len(d.ip))]
}

// point is where the decimal point falls among the digits: the digit at k
// weighs 10^(point-1-k).
func (d *decimal) point() int64 { return int64(len(d.ip)) + d.exp }

// integral reports whether the value is an integer: no digit other than 0
// after the point.
func (d *decimal) integral() bool { return d.first < 0 || d.last < d.point() }

// intDigits is how many digits the integer has.
func (d *decimal) intDigits() int64 {
	if d.first < 0 {
		return 1 // "0"
	}
	return d.point() - d.first
}

// sigDigits is how many significant digits the number has.
func (d *decimal) sigDigits() int64 {
	if d.first < 0 {
		return 0
	}
	return d.last - d.first + 1
}

// appendInteger appends the integer, which integral and intDigits admit.
func (d *decimal) appendInteger(dst []byte) []byte {
	if d.first < 0 {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	n := int64(len(d.ip) + len(d.fp))
	for k := d.first; k < d.point(); k++ {
		if k < n {
			dst = append(dst, d.digit(k))
		} else {
			dst = append(dst, '0')
		}
	}
	return dst
}
