package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/datafetch"
)

// data: the benchmark authors' public files (keyword lists, published
// leaderboards, target papers, ScholarIdeas), pinned by commit and sha256,
// downloaded into the data folder where the shipped experiments find them
// (authors_file in an experiment file).

func (a *app) dataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Download the benchmark authors' public data files the shipped experiments read",
		Long: `The shipped reproductions read the authors' own files: LiveIdeaBench's keyword
list, keyword domains and published leaderboard; IdeaBench's target papers;
ScholarEval's ScholarIdeas. ideaflow does not ship them; 'ideaflow data get SET'
downloads them from the authors' repository at a pinned commit, checks each
file's sha256 against the pinned one (a file that differs is refused), and
keeps them in the data folder: $` + datafetch.EnvDir + `, else the user's cache
folder + /ideaflow-data. Experiments name them with authors_file(SET, PATH).`,
	}
	cmd.AddCommand(a.dataGetCmd(), a.dataListCmd())
	return cmd
}

func (a *app) dataGetCmd() *cobra.Command {
	var dir, baseURL string
	cmd := &cobra.Command{
		Use:   "get SET...",
		Short: "Download sets (" + strings.Join(datafetch.Names(), ", ") + ") into the data folder",
		Long: `Download every file of each set that is not already in the data folder with its
pinned sha256. Offline, it says which files to download by hand and where to
put them; a second 'data get' then checks them without the network.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sets []*datafetch.Set
			for _, name := range args {
				s, err := datafetch.Lookup(name)
				if err != nil {
					return &exitError{exitBadInput, err}
				}
				sets = append(sets, s)
			}
			if dir == "" {
				dir = datafetch.DefaultDir(".")
			}
			f := &datafetch.Fetcher{Dir: dir, BaseURL: baseURL}
			var failed []string
			for _, s := range sets {
				rep, err := f.Get(cmd.Context(), s)
				fmt.Fprintf(a.stdout, "%s: %d files (%s) of %s@%s: %d downloaded (%s), %d already in place, in %s\n",
					s.Name, len(s.Files), sizeText(s.Size()), s.Repo, s.Commit[:7], rep.Downloaded, sizeText(rep.Bytes), rep.Present, s.Dir(dir))
				if s.License == "" {
					fmt.Fprintf(a.stdout, "  note: %s ships no license file; the files are the authors', read here from their public repository\n", s.Repo)
				}
				if err != nil {
					fmt.Fprintln(a.stderr, "ideaflow:", err)
					failed = append(failed, s.Name)
				}
			}
			if env := os.Getenv(datafetch.EnvDir); dir != datafetch.DefaultDir(".") && env != dir {
				fmt.Fprintf(a.stdout, "The experiments look in %s: set %s=%s for them to find these.\n", datafetch.DefaultDir("."), datafetch.EnvDir, dir)
			}
			if len(failed) > 0 {
				// Like failed nodes: what did arrive is kept, a re-run fetches the rest.
				return &exitError{exitFailedNodes, fmt.Errorf("%s not complete", strings.Join(failed, ", "))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "data folder (default $"+datafetch.EnvDir+", else the user cache folder + /ideaflow-data)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "serve the repositories' files from this URL instead, as <url>/<owner>/<repo>/<commit>/<path> (a mirror; tests)")
	return cmd
}

func (a *app) dataListCmd() *cobra.Command {
	var dir string
	return &cobra.Command{
		Use:   "list",
		Short: "List the sets, their pinned repositories and whether they are in the data folder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				dir = datafetch.DefaultDir(".")
			}
			fmt.Fprintf(a.stdout, "Data folder: %s\n\n", dir)
			for _, s := range datafetch.Sets() {
				state := "in place"
				switch missing, changed := s.Check(dir); {
				case missing+changed == len(s.Files) && changed == 0:
					state = "not downloaded: ideaflow data get " + s.Name
				case missing+changed > 0:
					state = fmt.Sprintf("%d missing, %d changed: ideaflow data get %s", missing, changed, s.Name)
				}
				license := s.License
				if license == "" {
					license = "no license file"
				}
				fmt.Fprintf(a.stdout, "%-14s %s@%s (%s), %d files, %s: %s\n  %s\n", s.Name, s.Repo, s.Commit[:7], license, len(s.Files), sizeText(s.Size()), state, s.About)
			}
			return nil
		},
	}
}

// sizeText writes a byte count for people: 23 kB, 2.4 MB.
func sizeText(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
