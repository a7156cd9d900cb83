package ref

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestAppendIntegerForms(t *testing.T) {
	for _, c := range []struct{ num, want string }{
		// No other form: not an integer, or its text already is one.
		{"1234567890", ""},
		{"0", ""},
		{"-42", ""},
		{"0.5", ""},
		{"1234567890.5", ""},
		{"1.5e-3", ""},
		{"1e400", ""}, // more than 40 digits, and no float64
		{"", ""},
		{"-", ""},
		{".", ""},
		{"e5", ""},
		{"1e", ""},
		{"1e+", ""},
		{"1.2.3", ""},
		{"1e5e5", ""},
		{"--1", ""},
		{"0x10", ""},
		{"NaN", ""},
		{"Infinity", ""},
		{"1_000", ""},
		{"1 2", ""},
		// Integers written otherwise.
		{"1234567890.0", "1234567890"},
		{"1.23456789e9", "1234567890"},
		{"1234567890e0", "1234567890"},
		{"12345678.9e2", "1234567890"},
		{"123456789000E-2", "1234567890"},
		{"1.23456789E+09", "1234567890"},
		{"1234567890.000", "1234567890"}, // a numeric's scale
		{"-1.23456789e9", "-1234567890"},
		{"+7", "7"},
		{"007", "7"},
		{"7.", "7"},
		{"1.7333e+15", "1733300000000000"},
		{"1e+07", "10000000"},
		{"1e21", "1000000000000000000000"}, // JavaScript prints 1e+21
		{"1e39", "1" + strings.Repeat("0", 39)},
		{"1e40", ""},
		{"0.0", "0"},
		{"-0", "0"},
		{"-0.0e-5", "0"},
		{"0e999999999999999999999", "0"},
		{"1e-99999999999999999999999", "0"}, // a float64 reads 0
		{".5e1", "5"},
		// Beyond 2^53 a float64 is not the exact value: both are given.
		{"12345678901234567890", "12345678901234567000"},
		{"12345678901234567890.0", "12345678901234567890 12345678901234567000"},
		{"9007199254740993", "9007199254740992"},
		{"9007199254740993.0", "9007199254740993 9007199254740992"},
		{"1234567890.0000000000000001", "1234567890"}, // no integer, but a float64 reads 1234567890
		{"1234567890.00000000000000000000000000000000000000000000000001", "1234567890"},
		{"1.2345678901234567e+19", "12345678901234567000"},
		{"1e-400", "0"},  // a float64 reads 0
		{"-1e-400", "0"}, // and JavaScript prints -0 as 0
		{"1e20", "100000000000000000000"},
	} {
		got := string(AppendIntegerForms(nil, []byte(c.num)))
		want := ""
		if c.want != "" {
			want = " " + c.want
		}
		if got != want {
			t.Errorf("AppendIntegerForms(%q) = %q, want %q", c.num, got, want)
		}
	}
	// dst is extended, not overwritten.
	if got := string(AppendIntegerForms([]byte("x"), []byte("1e3"))); got != "x 1000" {
		t.Errorf("append to x: %q", got)
	}
}

// TestAppendIntegerFormsBounded: a huge number costs no memory beyond what
// is appended, and its time is linear.
func TestAppendIntegerFormsBounded(t *testing.T) {
	long := []byte("1" + strings.Repeat("0", 1<<20) + ".0")
	fraction := []byte("1234567890." + strings.Repeat("0", 1<<20) + "1")
	zeros := []byte("0." + strings.Repeat("0", 1<<20) + "e999999")
	buf := make([]byte, 0, 128)
	for _, num := range [][]byte{long, fraction, zeros, []byte("1e9999999999999999999999999999")} {
		allocs := testing.AllocsPerRun(5, func() { AppendIntegerForms(buf[:0], num) })
		if allocs != 0 {
			t.Errorf("%.20q…: %v allocations", num, allocs)
		}
	}
	if got := string(AppendIntegerForms(nil, fraction)); got != " 1234567890" {
		t.Errorf("1234567890.0…01 = %q, want its float64's form", got)
	}
	if got := string(AppendIntegerForms(nil, zeros)); got != " 0" {
		t.Errorf("0.0…0e999999 = %q", got)
	}
}

var (
	// decimalNumber is the grammar AppendIntegerForms reads.
	decimalNumber = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	// integerForm is the shape of each form.
	integerForm = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

// FuzzAppendIntegerForms: any input, never a panic; a decimal number that
// ParseFloat reads as an integer below 1e21 is also given as JavaScript
// prints that float64 (strconv.FormatFloat(v, 'f', -1, 64)), or that is its
// text already. The one difference on purpose: -0 is "0", as JavaScript
// prints it, not FormatFloat's "-0".
func FuzzAppendIntegerForms(f *testing.F) {
	for _, s := range []string{"1234567890.0", "1.23456789e9", "12345678.9e2", "-0.0", "1e21", "9007199254740993",
		"12345678901234567890.0", "1234567890.0000000000000001", "1e-400", "0x1p4", "1e", ".5", "5.", "+1", "1e99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, num string) {
		out := string(AppendIntegerForms([]byte("x"), []byte(num)))
		if !strings.HasPrefix(out, "x") {
			t.Fatalf("%q: dst overwritten: %q", num, out)
		}
		var forms []string
		if out != "x" {
			if out[1] != ' ' {
				t.Fatalf("%q: forms %q not after a space", num, out)
			}
			forms = strings.Split(out[2:], " ")
		}
		if len(forms) > 2 {
			t.Fatalf("%q: forms %q", num, forms)
		}
		for _, form := range forms {
			if form == num || len(strings.TrimPrefix(form, "-")) > maxIntegerDigits || !integerForm.MatchString(form) || form == "-0" {
				t.Fatalf("%q: form %q", num, form)
			}
		}
		if len(forms) > 0 && !decimalNumber.MatchString(num) {
			t.Fatalf("%q is no decimal number, but has forms %q", num, forms)
		}
		checkExactForm(t, num, forms)
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !decimalNumber.MatchString(num) || v != math.Trunc(v) || math.Abs(v) >= 1e21 {
			return
		}
		want := strconv.FormatFloat(v, 'f', -1, 64)
		if v == 0 {
			want = "0"
		}
		if num != want && !slices.Contains(forms, want) {
			t.Fatalf("%q reads as %v: forms %q, without %q", num, v, forms, want)
		}
	})
}

// checkExactForm checks, for a short decimal number, that its exact value is
// among forms when it is an integer of at most maxIntegerDigits digits, as
// math/big computes it.
func checkExactForm(t *testing.T, num string, forms []string) {
	t.Helper()
	m := decimalNumber.FindStringSubmatch(num)
	if m == nil || len(num) > 64 {
		return
	}
	if e, err := strconv.Atoi(strings.TrimLeft(m[2], "eE")); m[2] != "" && (err != nil || e < -100 || e > 100) {
		return // math/big would build the power of ten
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		t.Fatalf("%q: math/big cannot read it", num)
	}
	if !r.IsInt() || len(r.Num().String()) > maxIntegerDigits+1 {
		return
	}
	exact := r.Num().String()
	if len(strings.TrimPrefix(exact, "-")) <= maxIntegerDigits && exact != num && !slices.Contains(forms, exact) {
		t.Fatalf("%q is %s: forms %q, without it", num, exact, forms)
	}
}

// TestAppendIntegerFormsRandom checks random decimals in every spelling
// against math/big and strconv, as the fuzz target does.
func TestAppendIntegerFormsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for range n {
		digits := make([]byte, 1+rng.IntN(25))
		for i := range digits {
			digits[i] = byte('0' + rng.IntN(10))
		}
		if rng.IntN(2) == 0 {
			for i := len(digits) - rng.IntN(len(digits)+1); i < len(digits); i++ {
				digits[i] = '0' // trailing zeros, as a scale writes them
			}
		}
		var b strings.Builder
		if rng.IntN(4) == 0 {
			b.WriteByte('-')
		}
		p := rng.IntN(len(digits) + 1)
		b.Write(digits[:p])
		if p < len(digits) || rng.IntN(4) == 0 {
			b.WriteByte('.')
		}
		b.Write(digits[p:])
		if rng.IntN(2) == 0 {
			b.WriteString([]string{"e", "E", "e+", "e-", "E-"}[rng.IntN(5)])
			b.WriteString(strconv.Itoa(rng.IntN(30)))
		}
		num := b.String()
		if num == "-." || num == "." {
			continue
		}
		out := string(AppendIntegerForms(nil, []byte(num)))
		var forms []string
		if out != "" {
			forms = strings.Split(out[1:], " ")
		}
		checkExactForm(t, num, forms)
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			t.Fatalf("%q: %v", num, err)
		}
		if v != math.Trunc(v) || math.Abs(v) >= 1e21 {
			continue
		}
		want := strconv.FormatFloat(v, 'f', -1, 64)
		if v == 0 {
			want = "0"
		}
		if num != want && !slices.Contains(forms, want) {
			t.Fatalf("%q reads as %v: forms %q, without %q", num, v, forms, want)
		}
	}
}

func TestTextSeesIntegerForms(t *testing.T) {
	var texts []string
	e := &Extractor{Found: func(Reference, Place) {}, Text: func(s []byte) { texts = append(texts, string(s)) }}
	doc := `{"media_id":1234567890.0,"b":[1.23456789e9,-12345678.9e2,42,0.5],"e":"{\"id\":1234567890e0}"}`
	if err := e.Document(strings.NewReader(doc), Place{}); err != nil {
		t.Fatal(err)
	}
	want := `[media_id 1234567890.0 1234567890 b 1.23456789e9 1234567890 -12345678.9e2 -1234567890 42 0.5 e {"id":1234567890e0} id 1234567890e0 1234567890]`
	if got := fmt.Sprint(texts); got != want {
		t.Fatalf("texts %v, want %v", got, want)
	}
	// A column value holding JSON: its numbers too.
	texts = nil
	e.Value([]byte(`[1234567890.000]`), Place{})
	if got, want := fmt.Sprint(texts), `[[1234567890.000] 1234567890.000 1234567890]`; got != want {
		t.Fatalf("texts %v, want %v", got, want)
	}
}
