package migrate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// genStyle is one encoder's way of spelling strings, for the tests: each
// class of character is written as itself, with its one-letter escape or with
// \uXXXX.
type genStyle struct {
	slash, html, nonASCII, lineSep, del, apos spelling
	quoteU, backslashU, upper                 bool
	controlU                                  [5]bool // \b \f \n \r \t as \u00XX
}

// styleFrom draws a style from the bits of a fuzz input.
func styleFrom(bits uint32) genStyle {
	take := func(n uint32) uint32 {
		v := bits % n
		bits /= n
		return v
	}
	gs := genStyle{
		slash:    spelling(take(3)),
		html:     spelling(take(2)) * spellU,
		nonASCII: spelling(take(2)) * spellU,
		lineSep:  spelling(take(2)) * spellU,
		del:      spelling(take(2)) * spellU,
		apos:     spelling(take(2)) * spellU,
	}
	gs.quoteU, gs.backslashU, gs.upper = take(2) == 1, take(2) == 1, take(2) == 1
	for i := range gs.controlU {
		gs.controlU[i] = take(2) == 1
	}
	return gs
}

// genEncode writes s in the style; an encoder written apart from the one
// under test. Bytes that are not UTF-8 are written as they are.
func genEncode(s string, gs genStyle) string {
	var b strings.Builder
	u := func(r rune) {
		if gs.upper {
			fmt.Fprintf(&b, `\u%04X`, r)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	spell := func(r rune, sp spelling, short string) {
		switch sp {
		case spellU:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				u(r1)
				u(r2)
			} else {
				u(r)
			}
		case spellShort:
			b.WriteString(short)
		default:
			b.WriteRune(r)
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '"':
			spell(r, map[bool]spelling{false: spellShort, true: spellU}[gs.quoteU], `\"`)
		case r == '\\':
			spell(r, map[bool]spelling{false: spellShort, true: spellU}[gs.backslashU], `\\`)
		case r == '/':
			spell(r, gs.slash, `\/`)
		case r == '&' || r == '<' || r == '>':
			spell(r, gs.html, "")
		case r == '\'':
			spell(r, gs.apos, "")
		case r == 0x7f:
			spell(r, gs.del, "")
		case r < 0x20:
			if k := strings.IndexRune("\b\f\n\r\t", r); k >= 0 && !gs.controlU[k] {
				b.WriteString(`\` + string("bfnrt"[k]))
			} else {
				u(r)
			}
		case r == '\u2028' || r == '\u2029':
			spell(r, gs.lineSep, "")
		case r >= 0x80:
			spell(r, gs.nonASCII, "")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// everyClass holds a character of every class a style decides; \x1b is
// always \u001b, so it shows the case of hex letters.
const everyClass = "/<>&'\x7f\u2028é😀\"\\\b\f\n\r\t\x01\x1b"

// FuzzReencode: for any string and any encoder's style, the string decodes
// back from its encoding; the style read from the encoded token (and from the
// text around it) spells the unchanged string exactly as the encoder did;
// and replacing a part of the token gives what the encoder would write for the
// edited string, with every other byte kept.
func FuzzReencode(f *testing.F) {
	f.Add("/srv/agent/.forge/files/inbound/ab.png", uint32(1), 0, 3, "s3://media/x.png")
	f.Add("/home/u/.coffer/channel-media/b0f2.第二版", uint32(4), 5, 40, "s3://m/b0f2.第二版")
	f.Add("/srv/a&b/.forge/x.png\n\"q\"\t😀", uint32(2), 1, 9, "s3://m/r&d/<x>/😀\u2028")
	f.Add("saved to ./x.png\x7f 'ok'", uint32(1<<20-1), 9, 16, "a\\b\x01'")
	f.Fuzz(func(t *testing.T, s string, bits uint32, i, j int, repl string) {
		gs := styleFrom(bits)
		tok := genEncode(s, gs)
		d := decodeJSONString([]byte(tok))
		if string(d.text) != s {
			t.Fatalf("decode(%q) = %q, want %q", tok, d.text, s)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal([]byte(`"`+tok+`"`), &back); err != nil || back != s {
				t.Fatalf("encoding/json reads %q as %q, %v; want %q", tok, back, err, s)
			}
		}
		own := jsonStyle{own: observeStyle([]byte(tok))}
		if got := string(own.appendEncoded(nil, []byte(s))); got != tok {
			t.Fatalf("style %+v: re-encoded %q as %q, want %q", gs, s, got, tok)
		}

		// A part of the string replaced, in a document that shows every class.
		i, j = runeStart(s, i), runeStart(s, j)
		if i > j {
			i, j = j, i
		}
		from, to := d.rawAt(i), d.rawAt(j)
		if from < 0 || to < 0 {
			t.Fatalf("rune boundaries %d, %d fall inside escapes of %q", i, j, tok)
		}
		doc := &lazyEvidence{text: []byte(`{"other": "` + genEncode(everyClass, gs) + `"}`)}
		st := jsonStyle{own: observeStyle([]byte(tok)), outer: doc}
		edited := tok[:from] + string(st.appendEncoded(nil, []byte(repl))) + tok[to:]
		want := s[:i] + repl + s[j:]
		if utf8.ValidString(repl) {
			if exp := genEncode(want, gs); edited != exp {
				t.Fatalf("style %+v: replacing %q in %q gave %q, want %q", gs, s[i:j], tok, edited, exp)
			}
		}
		if got := string(decodeJSONString([]byte(edited)).text); got != want {
			t.Fatalf("edited token %q decodes to %q, want %q", edited, got, want)
		}
	})
}

// runeStart maps an arbitrary index to the start of a character of s (a byte
// that is not UTF-8 is a character of its own).
func runeStart(s string, i int) int {
	at := int(uint(i) % uint(len(s)+1))
	start := 0
	for k := 0; k < len(s); {
		if k > at {
			break
		}
		start = k
		_, size := utf8.DecodeRuneInString(s[k:])
		k += size
	}
	if at == len(s) {
		return len(s)
	}
	return start
}

// FuzzSpliceToken: in any valid JSON string token, however mixed its escapes,
// a part replaced at character boundaries leaves a valid token that decodes to
// the edited text, with the bytes before and after the part unchanged; the
// decoder agrees with encoding/json.
func FuzzSpliceToken(f *testing.F) {
	f.Add(`\/srv\/a\u0026b\/x.png and caf\u00E9 \ud83d\ude00\n\"`, 2, 14, "s3://m/第二/x.png")
	f.Add(`plain /srv/agent/x.png`, 6, 22, "s3://b/k")
	f.Add(`\u7b2c\u4e8c\u7248 \t\\`, 0, 3, "<&>")
	f.Fuzz(func(t *testing.T, raw string, i, j int, repl string) {
		var want string
		if !utf8.ValidString(raw) || !utf8.ValidString(repl) || json.Unmarshal([]byte(`"`+raw+`"`), &want) != nil || strings.Contains(raw, `"`) && !json.Valid([]byte(`"`+raw+`"`)) {
			return
		}
		d := decodeJSONString([]byte(raw))
		if string(d.text) != want && !strings.Contains(want, "\uFFFD") {
			t.Fatalf("decode(%q) = %q, encoding/json says %q", raw, d.text, want)
		}
		text := string(d.text)
		i, j = runeStart(text, i), runeStart(text, j)
		if i > j {
			i, j = j, i
		}
		from, to := d.rawAt(i), d.rawAt(j)
		if from < 0 || to < 0 {
			t.Fatalf("rune boundaries %d, %d fall inside escapes of %q", i, j, raw)
		}
		st := jsonStyle{own: observeStyle([]byte(raw))}
		edited := raw[:from] + string(st.appendEncoded(nil, []byte(repl))) + raw[to:]
		var got string
		if err := json.Unmarshal([]byte(`"`+edited+`"`), &got); err != nil {
			t.Fatalf("edited token %q: %v", edited, err)
		}
		if exp := text[:i] + repl + text[j:]; string(decodeJSONString([]byte(edited)).text) != exp {
			t.Fatalf("edited token %q decodes to %q, want %q", edited, got, exp)
		}
	})
}
