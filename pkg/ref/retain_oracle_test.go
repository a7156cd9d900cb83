package ref

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// oracleIndex is the retention rule as first written, with Go maps and a
// string per key: simple enough to trust, too large for millions of blobs.
// The compact Index must agree with it on every input. The tokenizer (how a
// string is cut into tokens and hex runs, isToken, isHex) is shared, not
// re-written here: TestIndexRetentionRule and TestIndexDigestInALongerRun
// pin it with literal cases.
type oracleIndex struct {
	byToken    map[string][]int32
	byLead     map[string][]int32 // names that are not one token, by lead
	byDigest   map[blobname.Digest]int32
	moreDigest map[blobname.Digest][]int32
	odd        []oddName
	marks      []bool
	keys       []string
}

func newOracleIndex() *oracleIndex {
	return &oracleIndex{byToken: map[string][]int32{}, byLead: map[string][]int32{}, byDigest: map[blobname.Digest]int32{}, moreDigest: map[blobname.Digest][]int32{}}
}

func (x *oracleIndex) Add(key string) int {
	id := int32(len(x.keys))
	x.keys = append(x.keys, key)
	x.marks = append(x.marks, false)
	name := path.Base(key)
	if n, ok := blobname.Parse(name); ok {
		if _, dup := x.byDigest[n.Digest]; dup {
			x.moreDigest[n.Digest] = append(x.moreDigest[n.Digest], id)
		} else {
			x.byDigest[n.Digest] = id
		}
		return int(id)
	}
	if !isToken(name) {
		x.odd = append(x.odd, oddName{[]byte(name), id})
		if lead, _, ok := strings.Cut(name, "."); ok && len(lead) >= 16 && isToken(lead) {
			x.byLead[lead] = append(x.byLead[lead], id)
		}
		return int(id)
	}
	x.byToken[name] = append(x.byToken[name], id)
	if stem := strings.TrimSuffix(name, path.Ext(name)); stem != name && stem != "" {
		x.byToken[stem] = append(x.byToken[stem], id)
	}
	return int(id)
}

func (x *oracleIndex) Mark(s []byte) {
	for _, o := range x.odd {
		if bytes.Contains(s, o.name) {
			x.marks[o.id] = true
		}
	}
	eachToken(s, x.markToken)
	// A binary value (not UTF-8): every name that starts a token or starts
	// one byte into it.
	if !utf8.Valid(s) && len(x.byToken)+len(x.byLead) > 0 {
		eachToken(s, func(tok []byte) {
			for start := 0; start <= 1 && start < len(tok); start++ {
				for end := start + 1; end <= len(tok) && end-start <= 255; end++ {
					for _, id := range x.byToken[string(tok[start:end])] {
						x.marks[id] = true
					}
				}
			}
		})
	}
}

// eachToken calls fn with every token of s: a maximal run of token bytes.
func eachToken(s []byte, fn func(tok []byte)) {
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		fn(s[i:j])
		i = j
	}
}

func (x *oracleIndex) markToken(tok []byte) {
	if k := bytes.IndexByte(tok, '.'); k >= 16 {
		for _, id := range x.byLead[string(tok[:k])] {
			x.marks[id] = true
		}
	}
	for {
		for _, id := range x.byToken[string(tok)] {
			x.marks[id] = true
		}
		if len(tok) == 0 || tok[len(tok)-1] != '.' {
			break
		}
		tok = tok[:len(tok)-1]
	}
	if len(tok) < blobname.DigestLen {
		return
	}
	for i := 0; i < len(tok); {
		if !isHex(tok[i]) {
			i++
			continue
		}
		j := i
		for j < len(tok) && isHex(tok[j]) {
			j++
		}
		for k := i; k+blobname.DigestLen <= j; k++ {
			if d, ok := blobname.ParseDigest(string(tok[k : k+blobname.DigestLen])); ok {
				if id, ok := x.byDigest[d]; ok {
					x.marks[id] = true
					for _, id := range x.moreDigest[d] {
						x.marks[id] = true
					}
				}
			}
		}
		i = j
	}
}
