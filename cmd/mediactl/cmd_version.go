package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// buildVersion is set at release time with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version of mediactl and the Go it was built with",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			v := struct {
				envelope
				Version string `json:"version"`
				Go      string `json:"go"`
				OS      string `json:"os"`
				Arch    string `json:"arch"`
			}{g.envelope("mediactl.version/v1", outcome.OK), version(), runtime.Version(), runtime.GOOS, runtime.GOARCH}
			if g.output != "text" {
				return g.document(v)
			}
			fmt.Fprintf(g.stdout, "mediactl %s (%s %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
			return nil
		},
	}
}
