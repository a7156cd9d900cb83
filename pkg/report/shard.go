package report

// A shard's report (Options.Shard) is made on the shard's blobs only: each
// store's listing keeps them (retain.MarkOptions.Shard), and so do the
// counts. Which figures of the N shards add up to the whole store's, and
// which do not, is what Merge relies on:
//
//   - Every blob is in exactly one shard, and so is every reference: the
//     shard of the key it resolves to (in the first store it resolves
//     inside), where the blob it names, or misses, is listed. Blob and byte
//     counts, an owner's referenced and exclusive blobs, the shared and the
//     unattributed ones, the references, dangling references and blobs, the
//     age, type and size tables, the growth, the policies but the size cap,
//     the trash and the marks (by the key a trashed or marked blob had) all
//     add up.
//   - A session unit may name blobs of several shards. Its units are
//     therefore counted over every reference the shard read, before it kept
//     its own: every shard reads every session, so each gives an owner the
//     same units, those of the whole store.
//   - A size cap decides over all the blobs at once, oldest first: no shard
//     can say what it would free, so a shard's report leaves it out. The
//     days until a file system is full are left out too: a shard grows by
//     its part of the store's growth only.
//
// The retention's read hands every reference to the attribution
// (retain.MarkOptions.AllReferences), not only those the scan can place in
// the shard by what they name: for a blob of an opaque name that is not its
// key's shard. The attribution places each by the listings (see attribute).
