package migrate_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
)

// TestFindCutsWhereExtractorDoes: a reference is rewritten where the
// extractor found it, as a word of the text between the same breaks, and
// nowhere else. A word rule of the rewriter's own, which broke words only at
// ASCII characters outside paths, failed to see the reference between
// curly quotes or before a full stop of Chinese text, and rewrote a path the
// extractor reads as part of a longer word ("…/ab.png#page=2"): the reference
// reported stayed, counted as rewritten instead of kept.
func TestFindCutsWhereExtractorDoes(t *testing.T) {
	p := "/srv/agent/.forge/files/inbound/" + dA + ".png"
	for _, tc := range []struct{ name, text, want string }{
		{"curly quotes", "saved to “" + p + "” and " + p + "#page=2",
			"saved to “s3://media/inbound/" + dA + ".png” and " + p + "#page=2"},
		{"fullwidth colon and full stop", "已保存：" + p + "。",
			"已保存：s3://media/inbound/" + dA + ".png。"},
		{"query", "see " + p + "?download=1 or " + p,
			"see " + p + "?download=1 or s3://media/inbound/" + dA + ".png"},
		{"escaped JSON in text", `log: \u0022` + p + `\u0022, \n` + p + `\n`,
			`log: \u0022s3://media/inbound/` + dA + `.png\u0022, \ns3://media/inbound/` + dA + `.png\n`},
		{"ideographic space", "路径\u3000" + p + "\u3000ok",
			"路径\u3000s3://media/inbound/" + dA + ".png\u3000ok"},
		{"sentence punctuation", "(" + p + "), " + p + ".",
			"(s3://media/inbound/" + dA + ".png), s3://media/inbound/" + dA + ".png."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]string{"text": tc.text})
			must(t, err)
			out, ue := rewriteLikeExtractor(t, replacer(), ref.Place{Document: "t.json"}, string(doc))
			var got map[string]string
			must(t, json.Unmarshal([]byte(out), &got))
			if got["text"] != tc.want || len(ue.Kept) != 0 {
				t.Fatalf("rewritten to\n%q, kept %q\nwant\n%q", got["text"], ue.Kept, tc.want)
			}
			// The same text in a column.
			out, _ = rewriteLikeExtractor(t, replacer(), ref.Place{Table: "notes", Key: "id=1", Column: "body"}, tc.text)
			if out != tc.want {
				t.Fatalf("column value rewritten to\n%q\nwant\n%q", out, tc.want)
			}
		})
	}
}

// wordPieces are what FuzzRewriteCutsAsExtractor builds text from: references
// to migrated and other blobs, and every kind of character around a word.
var wordPieces = []string{
	"/srv/agent/.forge/files/inbound/" + dA + ".png",
	"/srv/agent/.forge/files/inbound/" + dB + ".pdf",
	"/srv/agent/.forge/files/inbound/" + dC + ".png",
	".forge/files/inbound/" + dA + ".png",
	"file:///srv/agent/.forge/files/inbound/" + dB + ".pdf",
	" ", " ", "\t", "\n", "\u00a0", "\u3000",
	"“", "”", "「", "」", "：", "。", "，", "—", "é", "第",
	".", ",", ":", ";", "!", "?", "(", ")", "[", "]", "<", ">", "'", "`", "\"", "|",
	"#", "$", "&", "*", "^", "%", "+", "=", "@", "~", "-", "_", "/", "\\",
	`\n`, `\t`, `\/`, `\u0022`, `\\`, "x", "a1", "see",
}

// FuzzRewriteCutsAsExtractor: in any text made of references and the
// characters around words, in a JSON string or a column, the rewriter
// rewrites exactly the references the extractor reports (see
// rewriteLikeExtractor), and keeps none: each stands where the extractor cut
// it, away from escapes, outside a {bucket, path} pair.
func FuzzRewriteCutsAsExtractor(f *testing.F) {
	f.Add([]byte{5, 11, 0, 12, 5, 0, 37})   // “A” A#
	f.Add([]byte{58, 15, 0, 16, 13, 3, 14}) // see：A。「.forge/…A」
	f.Add([]byte{0, 26, 57, 44, 56, 5, 0})  // A?a1=x A
	f.Add([]byte{54, 0, 54, 51, 3, 55, 2})  // \u0022A\u0022\n.forge/…A\\C
	f.Add([]byte{4, 21, 9, 1, 10, 53, 0})   // file://…B.\u00a0B\u3000\/A
	f.Fuzz(func(t *testing.T, picks []byte) { cutsAsExtractor(t, picks) })
}

// TestRewriteCutsAsExtractor is FuzzRewriteCutsAsExtractor over texts drawn at
// random, for the runs without -fuzz.
func TestRewriteCutsAsExtractor(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	n := 2000
	if testing.Short() {
		n = 200
	}
	for range n {
		picks := make([]byte, rnd.IntN(12))
		for i := range picks {
			picks[i] = byte(rnd.IntN(len(wordPieces)))
		}
		if !t.Run(fmt.Sprint(picks), func(t *testing.T) { cutsAsExtractor(t, picks) }) {
			return
		}
	}
}

func cutsAsExtractor(t *testing.T, picks []byte) {
	var b strings.Builder
	for _, p := range picks {
		b.WriteString(wordPieces[int(p)%len(wordPieces)])
	}
	text := b.String()
	doc, err := json.Marshal(map[string]any{"text": text, "parts": []string{text}})
	must(t, err)
	for _, u := range []struct {
		place ref.Place
		unit  string
	}{
		{ref.Place{Document: "t.json"}, string(doc)},
		{ref.Place{Table: "notes", Key: "id=1", Column: "body"}, text},
	} {
		if _, ue := rewriteLikeExtractor(t, replacer(), u.place, u.unit); len(ue.Kept) != 0 {
			t.Errorf("kept %q in\n%q", ue.Kept, u.unit)
		}
	}
}
