package ref

// WholeWord reports whether s[i:j] stands in s as a whole word, cut where the
// extractor cuts the words of a text it reads references from (Extractor
// reports a path or URI found inside longer text as one such word): nothing
// of a word runs on before i — it starts s, or a word break, or a JSON escape
// the extractor drops ("\n", "\u0022") precedes it — and nothing runs on
// after j but the sentence punctuation the extractor trims from a word's end
// ("…/ab.png." or "…/ab.png:"). Word breaks are white space, quotes and
// brackets, ",", ";", "|" and a backslash, and non-ASCII white space and
// punctuation ("“", "：", "。").
//
// A reference that is a whole value, trimmed of its white space, stands as a
// whole word too. The migration's rewriter replaces a reference only where
// it stands so, so that it changes what the extractor reported and nothing
// else.
func WholeWord(s []byte, i, j int) bool {
	if i < 0 || i > j || j > len(s) {
		return false
	}
	if wordStart(s, i) != i {
		return false
	}
	for _, c := range s[j:wordEnd(s, j)] {
		if !isTrailingPunct(c) {
			return false
		}
	}
	return true
}
