// Package retain is the retention rule: which blobs of a store the sessions
// keep. An Index holds a store's blob names compactly; every string of every
// session is given to Index.Mark, and a blob that some string names, in any
// spelling a writer may have used, is kept.
//
// The rule decodes nothing, so that no encoding nobody listed can hide a
// name. Writers escape what lies between letters and digits (a space as
// %20, '+', \u0020 or &#32;; ä as \u00e4, %C3%A4, \xc3\xa4 or &auml;), never
// ASCII letters and digits themselves, and each escape begins with a byte
// that is neither. So the rule matches on letters and digits alone: a digest
// or a long hex part of a name anywhere in the text, in either case; the
// words of any other name's stem, in order, each ending a word of the text.
// docs/retention.md states the rule in one page with a table of the forms
// it is tested against (retaintest holds the same table as data).
//
// The price is that a name is kept by more than a precise reference: a
// stem's words in that order anywhere in one session string. A false
// "referenced" only keeps a blob; a false "unreferenced" loses data.
//
// # The retention model
//
// Mark applies the rule to a whole store: it lists the store into an Index
// (with each blob's size and modification time, about 12 bytes a blob
// beside the index), gives every string of every session to it, and returns
// a Retention, the one decision that every removing path reads — gc's plans,
// verify's orphans, migrate's --delete-source; none of them decides
// retention on its own. A Retention keeps a blob a session names
// (KeptID), the whole group of an owner and its companions when a session
// names a member (MarkOptions.Companion), and a blob modified after the
// fence, or one of whose group was (Young; DefaultMinAge, NoMinAge,
// ParseAge); text naming a proven copy of a blob (MarkOptions.CopiedTo) does
// not keep the blob itself. A Retention that did not read the whole listing
// and every session is not Complete, and nothing may be removed on it.
package retain
