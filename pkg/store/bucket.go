package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/storekey"

	// The bucket kinds mediactl supports; see bucketParams.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

// BucketStore is a store on a gocloud.dev/blob bucket. It implements [Bucket].
//
// Credentials come from the environment as each gocloud driver documents (AWS
// default chain, Google Application Default Credentials or STORAGE_EMULATOR_HOST,
// AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_KEY or a connection string, ...), never
// from the URL.
//
// Stat reports the backend's MD5 where it has one. On S3 the MD5 is derived from the
// ETag, which is the MD5 of the content only for objects uploaded in a single
// request. Objects uploaded in several parts have a multipart ETag ("<hex>-<parts>")
// and Stat returns MD5 == nil for them — and the S3 driver (gocloud s3blob over the
// AWS transfer manager) uploads every blob of 16 MiB or more in parts (threshold
// 16 MiB, parts of 8 MiB), as do most other S3 tools for large files. Callers that
// need a content hash of every object must not rely on MD5; migrate records
// "sha256" in Metadata for that reason.
//
// A file:// bucket's files are never read through fileblob, which follows
// symbolic links and waits on FIFOs: Open, OpenObject, Stat, OpenInternal and
// the copies open the file fileblob keeps the object in as a LocalStore
// opens a blob, confined to the bucket's folder (see openFile).
type BucketStore struct {
	b *blob.Bucket
	// openURL is the URL b was opened from, without the prefix (see
	// openPrefixed).
	openURL *url.URL
	// unsummedOK is set for S3 when the URL leaves the request checksum to
	// the default: Puts whose caller checks the stored object's MD5 itself
	// (PutOptions.CallerVerifies) then go through unsummed, the same bucket
	// opened so that the SDK adds no checksum of its own to what it uploads.
	// It is opened on the first such Put: only migrate makes them.
	unsummedOK   bool
	unsummedOnce sync.Once
	unsummed     *blob.Bucket
	unsummedErr  error
	// s3put uploads small contents of known size (PutOptions.Size) to S3.
	s3put *s3Putter
	// ioTimeout is how long a connection to the service may go without
	// progress (io_timeout=; see withIOTimeout).
	ioTimeout time.Duration
	// guardReads: reads end after gcsReadStalls times ioTimeout without a
	// byte (gs:// on the JSON API; see newReader).
	guardReads bool
	scheme     string
	name       string
	prefix     string
	location   string
	// fileDir is a file:// bucket's folder below its prefix, opened as a
	// local store, from which its files are read (see openFile); fileMu
	// guards its opening and closing.
	fileDir    atomic.Pointer[LocalStore]
	fileMu     sync.Mutex
	fileClosed bool
}

var _ Bucket = (*BucketStore)(nil)

// OpenBucket opens the bucket named by rawURL, one of
//
//	s3://BUCKET[/PREFIX/][?region=R&endpoint=URL&use_path_style=true...]
//	gs://BUCKET[/PREFIX/][?...]
//	azblob://CONTAINER[/PREFIX/][?storage_account=A&domain=D&protocol=http&localemu=true]
//	file:///ABSOLUTE/DIR[?prefix=PREFIX/]
//	mem://[?prefix=PREFIX/]
//
// The query parameters are those of the gocloud.dev drivers (gocloud v0.49). The
// store can be confined to a key prefix, given as the URL path for s3, gs and azblob
// or as the generic prefix= parameter; a prefix is made to end in "/". A malformed
// URL, an unsupported scheme or an unknown parameter returns an error wrapping
// [ErrUsage] that says how to fix it. OpenBucket lists nothing: a missing bucket
// shows up on first use. On s3:// it resolves the credentials (a
// *CredentialsError when there are none) and refuses a custom endpoint that
// virtual-host addressing cannot reach (an *EndpointError); both are usage
// errors.
func OpenBucket(ctx context.Context, rawURL string) (*BucketStore, error) {
	s, err := parseBucketURL(rawURL)
	if err != nil {
		return nil, err
	}
	open := s.openURL
	b, putter, err := s.openPrefixed(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("store %s: open bucket: %w", Redact(open.String()), err)
	}
	s.b, s.s3put = b, putter
	if s.scheme == "file" {
		// The folder reads are confined to is the one there now; missing
		// (nothing written under the prefix yet), it is opened on first use.
		_, _ = s.prefixFolder()
	}
	return s, nil
}

// openPrefixed opens s.openURL with its gocloud driver, s3:// through openS3
// (unsummed as there, and with its s3Putter), confined to s.prefix.
func (s *BucketStore) openPrefixed(ctx context.Context, unsummed bool) (*blob.Bucket, *s3Putter, error) {
	b, putter, err := s.openWhole(ctx, unsummed)
	if err != nil {
		return nil, nil, err
	}
	if s.prefix != "" {
		b = blob.PrefixedBucket(b, s.prefix)
	}
	return b, putter, nil
}

// openWhole opens s.openURL with its gocloud driver, not confined to the
// prefix.
func (s *BucketStore) openWhole(ctx context.Context, unsummed bool) (*blob.Bucket, *s3Putter, error) {
	var b *blob.Bucket
	var putter *s3Putter
	var err error
	switch s.scheme {
	case "s3":
		b, putter, err = openS3(ctx, s.openURL, unsummed, s.ioTimeout)
	case "gs":
		b, err = openGCS(ctx, s.openURL, s.ioTimeout)
	case "azblob":
		b, err = openAzure(ctx, s.openURL, s.ioTimeout)
	default:
		b, err = blob.OpenBucket(ctx, s.openURL.String())
	}
	if err != nil {
		return nil, nil, err
	}
	return b, putter, nil
}

// ListInternalAbove calls fn for each object in the folder dir (a name
// ending in "/") of the internal folder of each folder above the store's
// prefix (the bucket's root, and each parent of the prefix): folder is that
// folder ("" or ending in "/"), Entry.Key the object's name relative to its
// internal folder. A store at the bucket's root has none above it. What a store at
// a prefix keeps may be named from above it: a store at the root holds
// the keys below every prefix too.
func (s *BucketStore) ListInternalAbove(ctx context.Context, dir string, fn func(folder string, e Entry) error) error {
	if s.prefix == "" {
		return nil
	}
	if err := validInternal(strings.TrimSuffix(dir, "/")); err != nil || !strings.HasSuffix(dir, "/") {
		return fmt.Errorf("store %s: list: %q is no folder name", s.location, dir)
	}
	parts := strings.Split(strings.TrimSuffix(s.prefix, "/"), "/")
	folders := []string{""}
	for i := 1; i < len(parts); i++ {
		folders = append(folders, strings.Join(parts[:i], "/")+"/")
	}
	var whole *blob.Bucket
	if s.scheme != "file" {
		b, _, err := s.openWhole(ctx, false)
		if err != nil {
			return s.errorf("list", internalName(dir), err)
		}
		defer b.Close()
		whole = b
	}
	for _, f := range folders {
		each := func(e Entry) error { return fn(f, e) }
		var err error
		if whole != nil {
			err = s.listInternalOf(ctx, blob.PrefixedBucket(whole, f), dir, each)
		} else {
			err = s.listFileInternalOf(ctx, f, dir, each)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Location returns the bucket URL, without credentials, and without
// io_timeout (and, for file://, no_tmp_dir, create_dir and dir_file_mode):
// how the bucket is reached or written is not which bucket it is, and
// reports, journals and metric labels stay the same whatever they are set
// to.
func (s *BucketStore) Location() string { return s.location }

// Scheme returns the URL scheme: "s3", "gs", "azblob", "file" or "mem".
func (s *BucketStore) Scheme() string { return s.scheme }

// Name returns the bucket or container name; for file:// the absolute directory.
func (s *BucketStore) Name() string { return s.name }

// Prefix returns the key prefix the store is confined to: "" or ending in "/".
func (s *BucketStore) Prefix() string { return s.prefix }

// Close releases the bucket.
func (s *BucketStore) Close() error {
	if s.unsummed != nil {
		s.unsummed.Close()
	}
	s.closeFileFolder()
	return s.b.Close()
}

// errorf wraps err with the store location, the operation and the key, mapping
// gocloud's NotFound to ErrNotExist.
func (s *BucketStore) errorf(op, key string, err error) error {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		if !errors.Is(err, ErrNotExist) {
			return fmt.Errorf("store %s: %s %s: %w: %w", s.location, op, key, ErrNotExist, err)
		}
	case gcerrors.Canceled, gcerrors.DeadlineExceeded:
		// gocloud wraps the context error; keep it matchable.
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("store %s: %s %s: %w", s.location, op, key, errors.Join(contextErr(err), err))
		}
	}
	return fmt.Errorf("store %s: %s %s: %w", s.location, op, key, err)
}

func contextErr(err error) error {
	if gcerrors.Code(err) == gcerrors.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// isInternal reports whether a bucket key lies in InternalDir.
func isInternal(key string) bool { return storekey.IsInternal(key) }

// List reports the objects whose key starts with prefix, in lexical key order (the
// order of the backends' listings), one page at a time through the gocloud
// iterator. Objects under InternalDir and "directory" placeholders (keys ending in
// "/", as created by cloud consoles) are skipped; one inside another store's
// internal folder is reported as [WithInternalFolders] says. Listed entries carry
// Key, Size and ModTime, and on S3 and Azure the ETag as Stat gives it; use Stat
// for the rest. A file:// bucket is listed by walking its directory (see
// listFile), which reports regular files only.
func (s *BucketStore) List(ctx context.Context, prefix string, fn func(Entry) error) error {
	if strings.HasPrefix(prefix, InternalDir+"/") {
		return nil
	}
	if s.scheme == "file" {
		return s.listFile(ctx, prefix, nil, fn)
	}
	found := internalFolders(ctx)
	it := s.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return s.errorf("list", prefix, err)
		}
		if obj.IsDir || strings.HasSuffix(obj.Key, "/") {
			// A placeholder inside another store's internal folder is
			// all there may be of it.
			if dir, ok := internalFolderOf(obj.Key); ok && found != nil && !isInternal(obj.Key) {
				found(dir)
			}
			continue
		}
		if isInternal(obj.Key) {
			continue
		}
		if err := fn(s.listed(obj)); err != nil {
			return err
		}
	}
}

// listed is what a listing says of obj: its key, size and time, and on S3
// and Azure its ETag, in the form Stat gives it (see etag).
func (s *BucketStore) listed(obj *blob.ListObject) Entry {
	e := Entry{Key: obj.Key, Size: obj.Size, ModTime: obj.ModTime}
	switch s.scheme {
	case "azblob":
		var item container.BlobItem
		if obj.As(&item) && item.Properties != nil && item.Properties.ETag != nil {
			e.ETag = s.etag(string(*item.Properties.ETag))
		}
	case "s3":
		var o types.Object
		if obj.As(&o) {
			e.ETag = s.etag(aws.ToString(o.ETag))
		}
	}
	return e
}

// etag is the one form of an ETag that every Entry of the store carries,
// listed or stat'ed, so that a tag a listing gave and one a Stat of the same
// write gave are equal as strings (trash's check right before a delete
// compares them; a deleted run's record finds the version by it). On S3 and
// Azure the tag is an HTTP entity tag, and is written quoted, as a HEAD's
// header carries it: Azure's listing gives it bare, and an S3 service's
// listing may too. GCS's is the JSON API's etag, no entity tag, and is left
// as the service gives it (its listings carry none).
func (s *BucketStore) etag(tag string) string {
	if s.scheme == "s3" || s.scheme == "azblob" {
		return quotedETag(tag)
	}
	return tag
}

// quotedETag writes an entity tag as an HTTP header carries it, quoted.
func quotedETag(tag string) string {
	if tag == "" || strings.HasPrefix(tag, `"`) || strings.HasPrefix(tag, `W/"`) {
		return tag
	}
	return `"` + tag + `"`
}

// listFile lists a file:// bucket by walking its directory: fileblob's own listing
// follows directory-walk order, not key order ("a/b" before "a-c"), and pages by
// comparing keys, so it can skip objects. The walk sees what fileblob stores:
// regular files, with names hex-unescaped and "*.attrs" sidecars left out.
func (s *BucketStore) listFile(ctx context.Context, prefix string, keep func(string) bool, fn func(Entry) error) error {
	return s.walkFile(ctx, prefix, walker{keep: keep}, fn)
}

// walkFile walks a file:// bucket's directory (below its prefix) with w,
// which it completes with the directory and fileblob's naming.
func (s *BucketStore) walkFile(ctx context.Context, prefix string, w walker, fn func(Entry) error) error {
	root, err := os.OpenRoot(filepath.Join(s.name, filepath.FromSlash(s.prefix)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && s.prefix != "" {
			return nil // nothing was written under the prefix yet
		}
		return s.errorf("list", prefix, plainErr(err))
	}
	defer root.Close()
	w.root, w.errorf, w.fileblob = root, s.errorf, true
	return w.list(ctx, prefix, fn)
}

// ListEvery lists like List and, on a file:// bucket, also reports each
// entry that fileblob would not read as an object (a symbolic link, a named
// pipe), with its Mode: a reader that must read every object, a session
// source, says what it did not read instead of passing over it. A folder
// that cannot be listed fails the listing, and the bucket's folder (or its
// prefix's) may be a symbolic link, which is followed as the store does.
func (s *BucketStore) ListEvery(ctx context.Context, prefix string, fn func(Entry) error) error {
	if s.scheme == "file" && !strings.HasPrefix(prefix, InternalDir+"/") {
		return s.walkFile(ctx, prefix, walker{irregular: true}, fn)
	}
	return s.List(ctx, prefix, fn)
}

// ListSelected lists like List, reporting only the objects whose key keep
// accepts. A file:// bucket's walk does not hold the names of the others
// while it sorts a directory; any other bucket's listing is a stream of pages
// in key order already, and is filtered as it comes.
func (s *BucketStore) ListSelected(ctx context.Context, prefix string, keep func(key string) bool, fn func(Entry) error) error {
	if s.scheme == "file" && !strings.HasPrefix(prefix, InternalDir+"/") {
		return s.listFile(ctx, prefix, keep, fn)
	}
	return s.List(ctx, prefix, keptOnly(keep, fn))
}

// Stat returns the attributes of key: Size, ModTime, ContentType, MD5 (nil when the
// backend has none, see BucketStore) and user Metadata (keys lowercased). On a
// file:// bucket the object's file and its attributes file are read as Open
// reads (see openFile): a link or a FIFO is refused, not followed or waited on.
func (s *BucketStore) Stat(ctx context.Context, key string) (Entry, error) {
	if err := ValidKey(key); err != nil {
		return Entry{}, fmt.Errorf("store %s: stat: %w", s.location, err)
	}
	return s.stat(ctx, key)
}

func (s *BucketStore) stat(ctx context.Context, key string) (Entry, error) {
	if s.scheme == "file" {
		e, err := s.statFile(ctx, key)
		if err != nil {
			return Entry{}, s.errorf("stat", key, err)
		}
		return e, nil
	}
	a, err := s.b.Attributes(ctx, key)
	if err != nil {
		return Entry{}, s.errorf("stat", key, err)
	}
	return Entry{
		Key:         key,
		Size:        a.Size,
		ModTime:     a.ModTime,
		ETag:        s.etag(a.ETag),
		ContentType: a.ContentType,
		MD5:         a.MD5,
		Metadata:    a.Metadata,
	}, nil
}

// Open opens key for reading. The reader is bound to ctx. On a file:// bucket
// the object's file is opened as a local store opens a blob, whatever the
// key's spelling (see openFile): never through a symbolic link, never out of
// the bucket's folder, and a FIFO or device is refused (ErrNotRegular), never
// waited on.
func (s *BucketStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("store %s: open: %w", s.location, err)
	}
	r, _, err := s.newReader(ctx, key)
	if err != nil {
		return nil, s.errorf("open", key, err)
	}
	return &bucketReader{r: r, s: s, key: key}, nil
}

// OpenObject opens the object key (below the prefix) for reading, as Open
// does, and describes it: Size and ModTime, and the ContentType the service
// gives (none for a file:// bucket, whose attributes file it does not read).
// Unlike Open it does not apply ValidKey: key is one the bucket's listing
// returned, which a store would not write ("a//b" on S3, a backslash in a
// file name) — a session source reads every object it lists. A file://
// bucket's key still never leads out of its folder (see openFile).
func (s *BucketStore) OpenObject(ctx context.Context, key string) (io.ReadCloser, Entry, error) {
	r, e, err := s.newReader(ctx, key)
	if err != nil {
		return nil, Entry{}, s.errorf("open", key, err)
	}
	e.Key = key
	return &bucketReader{r: r, s: s, key: key}, e, nil
}

// gcsReadStalls is how many I/O timeouts one read of a gs:// object may
// last without returning a byte; see newReader.
const gcsReadStalls = 3

// newReader opens key (below the prefix) for reading and describes what it
// opened (Size, ModTime, ContentType where the service gives one). A file://
// bucket's object is opened by openFile, never by fileblob. On gs://
// (the JSON API; gRPC reads have their own keepalives), a
// Read that returns no byte for gcsReadStalls times io_timeout ends the read
// with an *IOTimeoutError: the storage library reopens a body that fails, at
// the offset reached, with no limit, so a service that answers each request
// and then stalls would hold the read for ever. A Read asks for at most
// ioTimeoutChunk bytes, so that a slow transfer that moves returns in time.
func (s *BucketStore) newReader(ctx context.Context, key string) (io.ReadCloser, Entry, error) {
	if s.scheme == "file" {
		rc, st, err := s.openFile(ctx, s.prefix+key, false)
		if err != nil {
			return nil, Entry{}, err
		}
		return rc, Entry{Size: st.size, ModTime: st.mtime}, nil
	}
	describe := func(r *blob.Reader) Entry {
		return Entry{Size: r.Size(), ModTime: r.ModTime(), ContentType: r.ContentType()}
	}
	if !s.guardReads {
		r, err := s.b.NewReader(ctx, key, nil)
		if err != nil {
			return nil, Entry{}, err
		}
		return r, describe(r), nil
	}
	rctx, cancel := context.WithCancel(ctx)
	r, err := s.b.NewReader(rctx, key, nil)
	if err != nil {
		cancel()
		return nil, Entry{}, err
	}
	g := &stallGuardReader{r: r, cancel: cancel, limit: gcsReadStalls * s.ioTimeout}
	g.timer = time.AfterFunc(time.Hour, func() { g.fired.Store(true); cancel() })
	g.timer.Stop() // armed by each Read, one timer for the whole read
	return g, describe(r), nil
}

// stallGuardReader ends a read whose Read returned nothing for limit.
type stallGuardReader struct {
	r      io.ReadCloser
	cancel context.CancelFunc
	limit  time.Duration
	timer  *time.Timer
	fired  atomic.Bool
}

func (g *stallGuardReader) Read(p []byte) (int, error) {
	if len(p) > ioTimeoutChunk {
		p = p[:ioTimeoutChunk]
	}
	g.timer.Reset(g.limit)
	n, err := g.r.Read(p)
	g.timer.Stop()
	if err != nil && err != io.EOF && g.fired.Load() {
		// Not wrapping err: it is the reader's context's, and this is no
		// interruption of the run.
		err = &IOTimeoutError{After: g.limit, Op: "read", Err: fmt.Errorf("%w: the read returned no byte in %d times io_timeout while the storage library reopened it (%v)", os.ErrDeadlineExceeded, gcsReadStalls, err)}
	}
	return n, err
}

func (g *stallGuardReader) Close() error {
	g.timer.Stop()
	g.cancel()
	return g.r.Close()
}

// bucketReader gives read errors the store's context.
type bucketReader struct {
	r   io.ReadCloser
	s   *BucketStore
	key string
}

func (r *bucketReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = r.s.errorf("read", r.key, err)
	}
	return n, err
}

func (r *bucketReader) Close() error { return r.r.Close() }

// Put uploads r to key with opts.ContentType (sniffed from the content when empty)
// and opts.Metadata; opts.ModTime is ignored (the service sets it). With
// opts.IfNotExist the write is conditional on the service side and fails with an
// error wrapping ErrExist when key exists. The object appears only once the upload
// completes: if r fails or ctx ends midway, the upload is aborted and nothing is
// written.
func (s *BucketStore) Put(ctx context.Context, key string, r io.Reader, opts PutOptions) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: put: %w", s.location, err)
	}
	return s.put(ctx, key, r, opts)
}

// partSize is the writer's buffer for an upload of r: opts.PartSize when
// given. Else, on GCS, a blob of a known size below the client's 16 MiB
// chunk gets a chunk of its own size (in the service's 256 KiB steps): the
// client allocates and clears a whole chunk per upload, however small the
// blob, and keeps it for the upload's retries; 32 uploads at once held
// 512 MiB, and clearing it took a third of the CPU of many small puts.
func (s *BucketStore) partSize(r io.Reader, opts PutOptions) int {
	if opts.PartSize != 0 || s.scheme != "gs" {
		return opts.PartSize
	}
	size := opts.Size
	if l, ok := r.(interface{ Len() int }); ok && size <= 0 {
		size = int64(l.Len()) // bytes.Reader, strings.Reader: what is left to read
	}
	const step, defaultChunk = 256 << 10, 16 << 20
	if size <= 0 || size >= defaultChunk {
		return 0 // the client's chunk
	}
	return int((size + step - 1) / step * step)
}

func (s *BucketStore) put(ctx context.Context, key string, r io.Reader, opts PutOptions) error {
	// Canceling wctx before Close makes the driver abort the upload.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unsummed := opts.CallerVerifies && s.unsummedOK
	if opts.SHA256 != "" && s.scheme == "s3" {
		d, ok := blobname.ParseDigest(opts.SHA256)
		if !ok {
			return s.errorf("put", key, fmt.Errorf("PutOptions.SHA256 %q is not a hex sha256", opts.SHA256))
		}
		wctx = withPayloadSHA256(wctx, d.String())
	}
	if s.s3put != nil && opts.Size > 0 && opts.Size < s3SinglePutMax && plainS3Key(s.prefix+key, opts.Metadata) {
		body, rest, release, err := readSmall(wctx, r, opts.Size)
		defer release()
		if err != nil {
			return s.errorf("put", key, err)
		}
		if body != nil {
			if err := s.s3put.put(wctx, s.prefix+key, body, opts, unsummed); err != nil {
				return s.errorf("put", key, s3PutError(err))
			}
			return nil
		}
		// Longer than opts.Size said: the writer below takes all of it.
		r = rest
	}
	b := s.b
	if unsummed {
		s.unsummedOnce.Do(func() {
			s.unsummed, _, s.unsummedErr = s.openPrefixed(context.WithoutCancel(ctx), true)
		})
		if s.unsummedErr != nil {
			return s.errorf("put", key, s.unsummedErr)
		}
		b = s.unsummed
	}
	w, err := b.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType:    opts.ContentType,
		Metadata:       opts.Metadata,
		IfNotExist:     opts.IfNotExist,
		BufferSize:     s.partSize(r, opts),
		MaxConcurrency: opts.PartConcurrency,
	})
	if err != nil {
		return s.errorf("put", key, err)
	}
	// blob.Writer's own ReadFrom allocates a fresh 1 MiB buffer per object;
	// for many small blobs that churn, not the network, would set the pace.
	bp := copyBuffers.Get().(*[]byte)
	_, err = io.CopyBuffer(writerOnly{w}, ctxReader{ctx, r}, *bp)
	copyBuffers.Put(bp)
	if err == nil {
		err = ctx.Err() // some drivers would still publish what they buffered
	}
	if err != nil {
		cancel()
		_ = w.Close()
		return s.errorf("put", key, err)
	}
	if err := w.Close(); err != nil {
		if opts.IfNotExist && gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return fmt.Errorf("store %s: put %s: %w: %w", s.location, key, ErrExist, err)
		}
		return s.errorf("put", key, err)
	}
	return nil
}

// s3MultipartThreshold is the size from which the S3 transfer manager uploads
// in parts; such objects have no MD5 (their ETag is not one).
const s3MultipartThreshold = 16 << 20

// ReportsMD5 says whether Stat can report an MD5 for an object of size bytes
// written by Put: false for S3 objects large enough to go up in parts. A
// writer that checks copies by MD5 need not compute one then.
func (s *BucketStore) ReportsMD5(size int64) bool {
	return !(s.scheme == "s3" && size >= s3MultipartThreshold)
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// writerOnly hides a writer's ReadFrom, so that io.CopyBuffer uses the buffer
// it is given.
type writerOnly struct{ io.Writer }

// Delete removes key; a missing key returns an error wrapping ErrNotExist.
func (s *BucketStore) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: delete: %w", s.location, err)
	}
	if err := s.delete(ctx, key); err != nil {
		return s.errorf("delete", key, err)
	}
	return nil
}

// delete removes the object key (relative to the prefix). On a file://
// bucket it goes through removeFile, not fileblob's Delete.
func (s *BucketStore) delete(ctx context.Context, key string) error {
	if s.scheme == "file" {
		return s.removeFile(s.prefix + key)
	}
	return s.b.Delete(ctx, key)
}

// removeFile removes the object name (prefix included) of a file:// bucket
// and its attributes file, through a root opened on the bucket's folder:
// fileblob's Delete resolves the path through symbolic links, so a folder
// swapped for a link to elsewhere after the plan (another process may own
// the folder) would have it remove a file outside the bucket. The root
// refuses any path that leaves the folder, and removes a link, not what it
// points to. A name fileblob escapes on disk is refused, not guessed at: it
// stays, with the reason.
func (s *BucketStore) removeFile(name string) error {
	if !fileblobPlain(name) {
		return fmt.Errorf("not removed: fileblob keeps %q under an escaped file name, which only fileblob's own delete (that follows links) would find", name)
	}
	root, err := os.OpenRoot(s.name)
	if err != nil {
		return err
	}
	defer root.Close()
	p := filepath.FromSlash(name)
	fi, err := root.Lstat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: %w (a folder is no object)", name, ErrNotExist)
	}
	if err := root.Remove(p); err != nil {
		return err
	}
	if err := root.Remove(p + ".attrs"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// fileblobPlain reports whether fileblob stores the object name (a valid
// key, prefix included) under the file name name itself: no control
// character, no "../" (a segment ending in ".."), nothing HexEscape would
// take for an escape.
func fileblobPlain(name string) bool {
	return !strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) &&
		!strings.Contains(name, "../") && !strings.Contains(name, "__0x") &&
		(os.PathSeparator == '/' || !strings.ContainsAny(name, `\<>:"|?*`))
}

// Internal folder access; see LocalStore.InternalRoot for the idea. Names are
// relative to InternalDir.

// PutInternal writes r to InternalDir/name like Put.
func (s *BucketStore) PutInternal(ctx context.Context, name string, r io.Reader, opts PutOptions) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: put: %w", s.location, err)
	}
	if s.scheme == "file" && opts.IfNotExist && fileblobKeepsName(s.prefix+internalName(name)) {
		return s.putFileExclusive(ctx, internalName(name), r)
	}
	return s.put(ctx, internalName(name), r, opts)
}

// putFileExclusive writes r to name (below the prefix) of a file:// bucket
// only if no file is there, by a link of a new file to the name, which the
// file system refuses when the name exists (ErrExist): fileblob's IfNotExist
// is a lock within one process, then a stat and a rename, so two processes
// (two runs taking the store's lock) could both write and both go on. The
// file gets no attributes file: an internal file needs none.
func (s *BucketStore) putFileExclusive(ctx context.Context, name string, r io.Reader) error {
	fail := func(err error) error { return s.errorf("put", name, plainErr(err)) }
	if err := os.MkdirAll(filepath.Join(s.name, filepath.FromSlash(s.prefix)), 0o755); err != nil {
		return fail(err)
	}
	root, err := os.OpenRoot(filepath.Join(s.name, filepath.FromSlash(s.prefix)))
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	dir := path.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := dir + "/.put-" + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	defer root.Remove(tmp)
	_, err = io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := root.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("store %s: put %s: %w", s.location, name, ErrExist)
		}
		return fail(err)
	}
	return nil
}

// fileblobKeepsName reports whether a file:// bucket (gocloud's fileblob)
// keeps the object name in a file of that very name below its folder: it
// escapes what s3KeyEscaped names, "//" and a trailing "/" too. Code that
// writes such a bucket's files itself, bypassing fileblob, does so only for
// these names. Reads bypass fileblob for every name (see openFile).
func fileblobKeepsName(name string) bool {
	return !s3KeyEscaped(name) && !strings.Contains(name, "//") && !strings.HasSuffix(name, "/")
}

// MoveToInternal moves blob key to InternalDir/name (server-side copy, then delete
// of key); an existing InternalDir/name is replaced.
func (s *BucketStore) MoveToInternal(ctx context.Context, key, name string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: move: %w", s.location, err)
	}
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: move: %w", s.location, err)
	}
	dst := internalName(name)
	if err := s.copy(ctx, key, dst); err != nil {
		return s.errorf("move "+key+" to", dst, err)
	}
	if err := s.b.Delete(ctx, key); err != nil {
		return s.errorf("move "+key+" to", dst, err)
	}
	return nil
}

// MoveFromInternal moves InternalDir/name back to blob key (restore). It never
// replaces an existing key: the content is written with IfNotExist (keeping content
// type and metadata), then InternalDir/name is deleted.
func (s *BucketStore) MoveFromInternal(ctx context.Context, name, key string) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: move: %w", s.location, err)
	}
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: move: %w", s.location, err)
	}
	src := internalName(name)
	op := "move " + src + " to"
	e, err := s.stat(ctx, src)
	if err != nil {
		return err
	}
	r, _, err := s.newReader(ctx, src)
	if err != nil {
		return s.errorf(op, key, err)
	}
	defer r.Close()
	if err := s.put(ctx, key, r, PutOptions{ContentType: e.ContentType, Metadata: e.Metadata, IfNotExist: true}); err != nil {
		return err
	}
	// The blob is back; only the trashed copy is left to remove. Retried here:
	// a retry of the whole move would find its own restored key and refuse.
	if err := RetryThrottled(ctx, func() error { return s.delete(ctx, src) }); err != nil {
		return s.errorf(op, key, err)
	}
	return nil
}

// OpenInternal opens InternalDir/name for reading.
func (s *BucketStore) OpenInternal(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := validInternal(name); err != nil {
		return nil, fmt.Errorf("store %s: open: %w", s.location, err)
	}
	key := internalName(name)
	r, _, err := s.newReader(ctx, key)
	if err != nil {
		return nil, s.errorf("open", key, err)
	}
	return &bucketReader{r: r, s: s, key: key}, nil
}

// DeleteInternal removes InternalDir/name.
func (s *BucketStore) DeleteInternal(ctx context.Context, name string) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: delete: %w", s.location, err)
	}
	key := internalName(name)
	if err := s.delete(ctx, key); err != nil {
		return s.errorf("delete", key, err)
	}
	return nil
}

// ListInternal lists the objects below InternalDir whose name starts with
// prefix, in the service's order.
func (s *BucketStore) ListInternal(ctx context.Context, prefix string, fn func(Entry) error) error {
	if s.scheme == "file" {
		return s.listFileInternalOf(ctx, s.prefix, prefix, fn)
	}
	return s.listInternalOf(ctx, s.b, prefix, fn)
}

// listInternalOf is ListInternal in the internal folder of the bucket b (the
// store's, or that of a folder above its prefix).
func (s *BucketStore) listInternalOf(ctx context.Context, b *blob.Bucket, prefix string, fn func(Entry) error) error {
	full := internalName(prefix)
	it := b.List(&blob.ListOptions{Prefix: full})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return s.errorf("list", full, err)
		}
		if obj.IsDir || strings.HasSuffix(obj.Key, "/") || strings.HasSuffix(obj.Key, ".attrs") && s.scheme == "file" {
			continue
		}
		// With the ETag, as List gives it: a purge's record of the trashed
		// copies it deletes finds their versions by it.
		e := s.listed(obj)
		e.Key = strings.TrimPrefix(obj.Key, InternalDir+"/")
		if err := fn(e); err != nil {
			return err
		}
	}
}

// listFileInternalOf is ListInternal of a file:// bucket, in the internal
// folder of folder (the store's prefix, or a folder above it), by the walk List
// takes there: fileblob's own listing pages by key but walks the folders in
// their order, and a page that ends inside a folder drops the keys sorted
// after the folder's ("a-x.png" after "a/…"): a restore then missed blobs of
// its run and reported none missing. Only regular files are reported.
func (s *BucketStore) listFileInternalOf(ctx context.Context, folder, prefix string, fn func(Entry) error) error {
	root, err := os.OpenRoot(filepath.Join(s.name, filepath.FromSlash(folder), InternalDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing was written there yet
		}
		return s.errorf("list", internalName(prefix), plainErr(err))
	}
	defer root.Close()
	w := walker{root: root, errorf: s.errorf, fileblob: true}
	return w.list(ctx, prefix, func(e Entry) error {
		if !e.Regular() {
			return nil
		}
		return fn(e)
	})
}

// Blob returns the underlying gocloud bucket (already confined to Prefix), for
// driver-specific needs through its As method. Writes through it bypass the key
// checks of the store, and reads through it of a file:// bucket are not
// confined (fileblob follows links and waits on FIFOs): read with Open,
// OpenObject and Stat.
func (s *BucketStore) Blob() *blob.Bucket { return s.b }

// isThrottled reports whether err is a service asking the client to slow down
// — S3's 503 SlowDown, HTTP 429, Azure's ServerBusy, GCS's rateLimitExceeded —
// after the SDK's own retries gave up: worth another try after a pause.
func isThrottled(err error) bool {
	if err == nil {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.ResourceExhausted:
		return true
	}
	code, status := serviceError(err)
	switch code {
	case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests", "ServerBusy", "rateLimitExceeded", "userRateLimitExceeded":
		return true
	}
	return status == 429 || status == 503
}

// serviceError returns the error code and HTTP status a service's SDK
// attached to err ("" and 0 when none).
func serviceError(err error) (code string, status int) {
	var apiErr interface{ ErrorCode() string }
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var st interface{ HTTPStatusCode() int }
	if errors.As(err, &st) {
		status = st.HTTPStatusCode()
	}
	return code, status
}

// RetryThrottled runs op again, with exponential backoff and jitter, while the
// service says to slow down (isThrottled) after the SDK's own retries gave up:
// S3 answers 503 SlowDown past 3,500 deletes a second per prefix. Up to 8
// tries, about half a minute at most. When ctx ends during a pause, the error
// is ctx's joined with the service's: the op was refused, not done, so the
// caller counts it as not attempted, not as failed.
func RetryThrottled(ctx context.Context, op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !isThrottled(err) || attempt == throttleTries {
			return err
		}
		select {
		case <-time.After(throttlePause(attempt)):
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		}
	}
}
