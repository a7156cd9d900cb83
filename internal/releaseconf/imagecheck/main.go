// Command imagecheck checks, offline, the container image goreleaser.yaml's
// kos section describes: it assembles that image the way ko lays it out
// (the binary at /ko-app/<name>, the entrypoint, user, labels, platform and
// creation time the section sets) as an OCI image layout, reads the layout
// back, decodes the image's config and checks it, then takes the binary out
// of the image's layers and runs it ('version -o json').
//
// The release itself is built by ko on the section's base image, which is
// pulled from its registry: this check cannot fetch it, so it builds on an
// empty base. What it proves is the section's settings and that the binary
// the release ships runs from an image layer on its own (static, no shell,
// no library), not the base image's contents.
//
//	go run ./internal/releaseconf/imagecheck -config goreleaser.yaml -binary BIN -out .release/image -version V -commit C
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/mediactl/mediactl/internal/releaseconf"
)

func main() {
	config := flag.String("config", "goreleaser.yaml", "the release configuration")
	binary := flag.String("binary", "", "the linux binary the release built")
	out := flag.String("out", ".release/image", "where the OCI image layout is written")
	version := flag.String("version", "", "the version the binary must report")
	commit := flag.String("commit", "", "the commit the binary must report")
	flag.Parse()
	if err := run(*config, *binary, *out, *version, *commit); err != nil {
		fmt.Fprintln(os.Stderr, "imagecheck:", err)
		os.Exit(1)
	}
}

func run(config, binary, out, version, commit string) error {
	c, err := releaseconf.Load(config)
	if err != nil {
		return err
	}
	if len(c.Kos) != 1 {
		return fmt.Errorf("%s: %d kos entries, want 1", config, len(c.Kos))
	}
	k := c.Kos[0]
	name := path.Base(k.Main)
	entry := "/ko-app/" + name
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	created := time.Now().UTC().Truncate(time.Second)
	if commit != "" {
		if out, err := exec.Command("git", "log", "-1", "--format=%cI", commit).Output(); err == nil {
			if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out))); err == nil {
				created = t.UTC()
			}
		}
	}

	// The image, as ko lays it out: one layer holding the binary.
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, d := range []string{"ko-app/"} {
			if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: created}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(entry, "/"), Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin)), ModTime: created}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(bin); err != nil {
			return nil, err
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		return io.NopCloser(&b), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{entry}
	cf.Config.User = k.User
	cf.Config.Labels = k.Labels
	cf.Config.Env = []string{"PATH=/ko-app:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: created}); err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	lp, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendImage(img); err != nil {
		return err
	}

	// Read back from the layout, as a registry client would.
	back, err := layout.FromPath(out)
	if err != nil {
		return err
	}
	idx, err := back.ImageIndex()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("the layout holds %d images, want 1", len(m.Manifests))
	}
	got, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return err
	}
	gcf, err := got.ConfigFile()
	if err != nil {
		return fmt.Errorf("decoding the image config: %w", err)
	}
	var problems []string
	if gcf.Config.User == "" || strings.HasPrefix(gcf.Config.User, "0") || gcf.Config.User == "root" {
		problems = append(problems, fmt.Sprintf("user %q is not a non-root user", gcf.Config.User))
	}
	if len(gcf.Config.Entrypoint) != 1 || gcf.Config.Entrypoint[0] != entry {
		problems = append(problems, fmt.Sprintf("entrypoint %v, want [%s]", gcf.Config.Entrypoint, entry))
	}
	if gcf.Config.Labels["org.opencontainers.image.source"] == "" {
		problems = append(problems, "no org.opencontainers.image.source label")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}

	// The binary, out of the image's layers, runs.
	dir, err := os.MkdirTemp("", "imagecheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rc := mutate.Extract(got)
	defer rc.Close()
	tr := tar.NewReader(rc)
	extracted := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if "/"+h.Name != entry {
			continue
		}
		extracted = filepath.Join(dir, name)
		f, err := os.OpenFile(extracted, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if extracted == "" {
		return fmt.Errorf("the image's layers hold no %s", entry)
	}
	cmd := exec.Command(extracted, "version", "-o", "json")
	cmd.Env = append(gcf.Config.Env, "HOME=/nonexistent")
	outb, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("running %s from the image: %w", entry, err)
	}
	var v struct{ Version, Commit string }
	if err := json.Unmarshal(outb, &v); err != nil {
		return fmt.Errorf("%s version -o json: %w", entry, err)
	}
	if (version != "" && v.Version != version) || (commit != "" && v.Commit != commit) {
		return fmt.Errorf("the image's binary says version %s, commit %s; want %s, %s", v.Version, v.Commit, version, commit)
	}
	digest, _ := got.Digest()
	fmt.Printf("imagecheck: %s (%s): user %s, entrypoint %s, created %s; its binary runs: version %s, commit %s (built on an empty base: %s is not fetched offline)\n",
		out, digest, gcf.Config.User, gcf.Config.Entrypoint[0], gcf.Created.UTC().Format(time.RFC3339), v.Version, v.Commit, k.BaseImage)
	return nil
}
