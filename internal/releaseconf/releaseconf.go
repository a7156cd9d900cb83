// Package releaseconf reads goreleaser.yaml, the release configuration, with
// a strict decoder, and turns its build section into the 'go build' command
// goreleaser would run for one target.
//
// CI runs goreleaser itself (scripts/release-check.sh: 'goreleaser check' and
// a linux/amd64 snapshot build); this package's tests add what goreleaser does
// not check, that a release ships what it must (static targets, archives with
// the completions and man page, checksums, packages), and its releasecheck
// command checks the binary goreleaser built. Where goreleaser cannot be
// installed, outside CI, releasecheck builds linux/amd64 from the same
// section the release uses instead, so the two cannot drift.
//
// The types cover the subset of goreleaser v2's configuration this project
// uses; a key outside it is an error here even where goreleaser would accept
// it, and is added to these types when the release starts to need it.
package releaseconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// Config is goreleaser.yaml.
type Config struct {
	Version     int       `yaml:"version"`
	ProjectName string    `yaml:"project_name"`
	Dist        string    `yaml:"dist"`
	Before      Before    `yaml:"before"`
	Builds      []Build   `yaml:"builds"`
	Archives    []Archive `yaml:"archives"`
	Checksum    Checksum  `yaml:"checksum"`
	NFPMs       []NFPM    `yaml:"nfpms"`
	Kos         []Ko      `yaml:"kos"`
	Publish     Publish   `yaml:"release"`
	Snapshot    Snapshot  `yaml:"snapshot"`
	Changelog   Changelog `yaml:"changelog"`
}

// Publish is the release section: where a release is published.
type Publish struct {
	GitHub Repo `yaml:"github"`
}

// Repo is a repository on a forge.
type Repo struct {
	Owner string `yaml:"owner"`
	Name  string `yaml:"name"`
}

// Before holds the commands run before any build.
type Before struct {
	Hooks []string `yaml:"hooks"`
}

// Build is one entry of builds.
type Build struct {
	ID           string   `yaml:"id"`
	Main         string   `yaml:"main"`
	Binary       string   `yaml:"binary"`
	Env          []string `yaml:"env"`
	GOOS         []string `yaml:"goos"`
	GOARCH       []string `yaml:"goarch"`
	Flags        []string `yaml:"flags"`
	Ldflags      []string `yaml:"ldflags"`
	ModTimestamp string   `yaml:"mod_timestamp"`
}

// Archive is one entry of archives.
type Archive struct {
	ID              string           `yaml:"id"`
	IDs             []string         `yaml:"ids"`
	Formats         []string         `yaml:"formats"`
	FormatOverrides []FormatOverride `yaml:"format_overrides"`
	NameTemplate    string           `yaml:"name_template"`
	BuildsInfo      FileInfo         `yaml:"builds_info"`
	Files           []ArchiveFile    `yaml:"files"`
}

// FormatOverride changes an archive's format for one GOOS.
type FormatOverride struct {
	GOOS    string   `yaml:"goos"`
	Formats []string `yaml:"formats"`
}

// ArchiveFile is a file put in an archive: a plain glob, or src/dst.
type ArchiveFile struct {
	Src         string   `yaml:"src"`
	Dst         string   `yaml:"dst"`
	StripParent bool     `yaml:"strip_parent"`
	Info        FileInfo `yaml:"info"`
}

// UnmarshalYAML accepts both of goreleaser's forms: "README.md" and
// {src: …, dst: …}; the mapping is decoded strictly too.
func (f *ArchiveFile) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		f.Src = n.Value
		return nil
	}
	type plain ArchiveFile
	var p plain
	if err := decodeNodeStrict(n, &p); err != nil {
		return err
	}
	*f = ArchiveFile(p)
	return nil
}

// Checksum is the checksum section.
type Checksum struct {
	NameTemplate string `yaml:"name_template"`
	Algorithm    string `yaml:"algorithm"`
}

// NFPM is one entry of nfpms (deb and rpm packages).
type NFPM struct {
	ID               string        `yaml:"id"`
	PackageName      string        `yaml:"package_name"`
	IDs              []string      `yaml:"ids"`
	FileNameTemplate string        `yaml:"file_name_template"`
	Formats          []string      `yaml:"formats"`
	Vendor           string        `yaml:"vendor"`
	Homepage         string        `yaml:"homepage"`
	Maintainer       string        `yaml:"maintainer"`
	Description      string        `yaml:"description"`
	License          string        `yaml:"license"`
	Section          string        `yaml:"section"`
	Bindir           string        `yaml:"bindir"`
	Mtime            string        `yaml:"mtime"`
	Contents         []NFPMContent `yaml:"contents"`
}

// NFPMContent is a file a package installs.
type NFPMContent struct {
	Src      string   `yaml:"src"`
	Dst      string   `yaml:"dst"`
	Type     string   `yaml:"type"`
	Packager string   `yaml:"packager"`
	FileInfo FileInfo `yaml:"file_info"`
}

// FileInfo is an installed file's mode.
type FileInfo struct {
	Mode  os.FileMode `yaml:"mode"`
	MTime string      `yaml:"mtime"`
}

// Ko is one entry of kos: a container image ko builds from a build's
// settings, without a Dockerfile or a Docker daemon.
type Ko struct {
	ID                  string            `yaml:"id"`
	Build               string            `yaml:"build"`
	Main                string            `yaml:"main"`
	BaseImage           string            `yaml:"base_image"`
	User                string            `yaml:"user"`
	Repositories        []string          `yaml:"repositories"`
	Tags                []string          `yaml:"tags"`
	Bare                bool              `yaml:"bare"`
	PreserveImportPaths bool              `yaml:"preserve_import_paths"`
	Platforms           []string          `yaml:"platforms"`
	SBOM                string            `yaml:"sbom"`
	CreationTime        string            `yaml:"creation_time"`
	KoDataCreationTime  string            `yaml:"ko_data_creation_time"`
	Labels              map[string]string `yaml:"labels"`
}

// Snapshot is the snapshot section.
type Snapshot struct {
	VersionTemplate string `yaml:"version_template"`
}

// Changelog is the changelog section.
type Changelog struct {
	Sort    string          `yaml:"sort"`
	Filters ChangelogFilter `yaml:"filters"`
}

// ChangelogFilter drops commits from the changelog.
type ChangelogFilter struct {
	Exclude []string `yaml:"exclude"`
	Include []string `yaml:"include"`
}

// Load reads and strictly decodes the configuration at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release configuration: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("release configuration %s: %w", path, err)
	}
	return c, nil
}

// Parse strictly decodes a configuration: an unknown key, a second
// document or a goreleaser version other than 2 is an error.
func Parse(b []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("more than one YAML document")
	}
	if c.Version != 2 {
		return nil, fmt.Errorf("version %d, want 2 (goreleaser v2)", c.Version)
	}
	return &c, nil
}

// decodeNodeStrict decodes one node rejecting unknown keys, as Parse does
// for the whole file (yaml.Node.Decode alone does not).
func decodeNodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// Build returns the build with the given id.
func (c *Config) Build(id string) (*Build, error) {
	for i := range c.Builds {
		if c.Builds[i].ID == id {
			return &c.Builds[i], nil
		}
	}
	return nil, fmt.Errorf("no build with id %q", id)
}

// Release holds the values goreleaser's templates see, for the fields the
// build section uses.
type Release struct {
	ProjectName     string
	Version         string
	FullCommit      string
	CommitDate      string
	CommitTimestamp string
}

// GoBuild is the command goreleaser runs for one target.
type GoBuild struct {
	// Env is added to the environment: the build's env, GOOS and GOARCH.
	Env []string
	// Args follow "go": build, the flags, -ldflags, -o, the main package.
	Args []string
}

// Command renders the build for goos/goarch into the 'go build' goreleaser
// would run, writing the binary to out.
func (b *Build) Command(goos, goarch, out string, r Release) (*GoBuild, error) {
	if !slices.Contains(b.GOOS, goos) || !slices.Contains(b.GOARCH, goarch) {
		return nil, fmt.Errorf("build %q has no target %s/%s (goos %v, goarch %v)", b.ID, goos, goarch, b.GOOS, b.GOARCH)
	}
	env := make([]string, 0, len(b.Env)+2)
	for _, e := range b.Env {
		s, err := render(e, r)
		if err != nil {
			return nil, fmt.Errorf("build %q env %q: %w", b.ID, e, err)
		}
		env = append(env, s)
	}
	env = append(env, "GOOS="+goos, "GOARCH="+goarch)
	args := []string{"build"}
	for _, f := range b.Flags {
		s, err := render(f, r)
		if err != nil {
			return nil, fmt.Errorf("build %q flag %q: %w", b.ID, f, err)
		}
		args = append(args, s)
	}
	var ld []string
	for _, l := range b.Ldflags {
		s, err := render(l, r)
		if err != nil {
			return nil, fmt.Errorf("build %q ldflags %q: %w", b.ID, l, err)
		}
		ld = append(ld, s)
	}
	if len(ld) > 0 {
		args = append(args, "-ldflags="+strings.Join(ld, " "))
	}
	args = append(args, "-o", out, b.Main)
	return &GoBuild{Env: env, Args: args}, nil
}

// render executes one goreleaser template; a field this package does not
// provide is an error, not an empty string in the binary.
func render(text string, r Release) (string, error) {
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, r); err != nil {
		return "", err
	}
	return b.String(), nil
}
