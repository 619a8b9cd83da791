package datafetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Fetcher downloads sets into a data folder.
type Fetcher struct {
	Dir     string       // the data folder
	BaseURL string       // "": DefaultBaseURL; tests point it at a local server
	Client  *http.Client // nil: a client with a 2-minute timeout per file
	// Workers is how many files are downloaded at once (0: 4).
	Workers int
}

// Report says what Get did.
type Report struct {
	Set        *Set
	Present    int   // files already in place with their pinned sha256
	Downloaded int   // files downloaded
	Bytes      int64 // bytes downloaded
}

// ErrMismatch marks a file whose content is not the pinned one.
var ErrMismatch = errors.New("sha256 mismatch")

// FileError is one file that could not be put in place.
type FileError struct {
	Path string // in the repository
	URL  string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.URL, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// GetError is a Get that left files missing: what failed, and how to put
// the files in place by hand.
type GetError struct {
	Set   *Set
	Dir   string
	Files []*FileError // by path
	Total int
}

// Unwrap gives the files' errors (errors.Is(err, ErrMismatch) asks whether
// a download was refused).
func (e *GetError) Unwrap() []error {
	out := make([]error, len(e.Files))
	for i, f := range e.Files {
		out[i] = f
	}
	return out
}

func (e *GetError) Error() string {
	s := e.Set
	var b strings.Builder
	fmt.Fprintf(&b, "data set %s: %d of %d files not saved; the first: %v", s.Name, len(e.Files), e.Total, e.Files[0])
	if errors.Is(e.Files[0], ErrMismatch) {
		b.WriteString(". A file whose sha256 is not the pinned one is refused, not saved: something between here and the repository changed it")
	}
	fmt.Fprintf(&b, ".\nTo put them in place by hand, download from %s (at that commit) ", s.TreeURL())
	fmt.Fprintf(&b, "and save each file at its path under %s%c:", s.Dir(e.Dir), filepath.Separator)
	for i, f := range e.Files {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Files)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s", f.Path)
	}
	fmt.Fprintf(&b, "\nthen run `ideaflow data get %s` again: it checks each file's sha256 and downloads only what is missing.", s.Name)
	return b.String()
}

// Get puts every file of set in the data folder: a file already there
// with its pinned sha256 is kept, any other is downloaded, checked, and
// saved under its path (written to a temporary file and renamed, so a
// broken download never leaves a partial file). A download whose sha256
// is not the pinned one is refused. It returns what it did, and a
// *GetError listing every file it could not put in place.
func (f *Fetcher) Get(ctx context.Context, set *Set) (*Report, error) {
	rep := &Report{Set: set}
	base := f.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	workers := f.Workers
	if workers <= 0 {
		workers = 4
	}
	var (
		mu   sync.Mutex
		errs []*FileError
		wg   sync.WaitGroup
	)
	jobs := make(chan File)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for file := range jobs {
				local := set.LocalPath(f.Dir, file.Path)
				if err := checkFile(local, file); err == nil {
					mu.Lock()
					rep.Present++
					mu.Unlock()
					continue
				}
				url := set.URL(base, file.Path)
				n, err := download(ctx, client, url, local, file)
				mu.Lock()
				if err != nil {
					errs = append(errs, &FileError{Path: file.Path, URL: url, Err: err})
				} else {
					rep.Downloaded++
					rep.Bytes += n
				}
				mu.Unlock()
			}
		}()
	}
	for _, file := range set.Files {
		jobs <- file
	}
	close(jobs)
	wg.Wait()
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
		return rep, &GetError{Set: set, Dir: f.Dir, Files: errs, Total: len(set.Files)}
	}
	return rep, nil
}

// download fetches url into local when its sha256 is file's.
func download(ctx context.Context, client *http.Client, url, local string, file File) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot download (offline, or the host is unreachable?): %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the server answered %s", resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), "."+filepath.Base(local)+".download-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	// At most one byte past the pinned size is read: a larger body is not
	// the file, whatever it holds.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, file.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("download broke off after %d bytes: %w", n, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != file.SHA256 || n != file.Size {
		return 0, fmt.Errorf("%w: the download (%d bytes) has sha256 %s, the pinned file (%d bytes) %s", ErrMismatch, n, got, file.Size, file.SHA256)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return 0, err
	}
	return n, nil
}

// checkFile reports nil when local holds file's pinned content.
func checkFile(local string, file File) error {
	fh, err := os.Open(local)
	if err != nil {
		return err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != file.SHA256 || n != file.Size {
		return fmt.Errorf("%w: %s (%d bytes) has sha256 %s, the pinned file (%d bytes) %s", ErrMismatch, local, n, got, file.Size, file.SHA256)
	}
	return nil
}

// Check counts the set's files missing from the data folder dir and those
// there with other content than the pinned.
func (s *Set) Check(dir string) (missing, changed int) {
	for _, file := range s.Files {
		err := checkFile(s.LocalPath(dir, file.Path), file)
		switch {
		case err == nil:
		case errors.Is(err, ErrMismatch):
			changed++
		default:
			missing++
		}
	}
	return missing, changed
}

// Find returns where the set's file or folder path is in the data folder
// dir, once every file at or under it is there with its pinned sha256;
// otherwise an error that says what to run, or what to download and where
// to put it.
func Find(dir, setName, path string) (string, error) {
	set, err := Lookup(setName)
	if err != nil {
		return "", err
	}
	files := set.under(path)
	if len(files) == 0 || path == "" {
		return "", fmt.Errorf("data set %s has no file or folder %q; its files include %s", set.Name, path, examples(set.Files))
	}
	var missing, changed []File
	var firstChange error
	for _, file := range files {
		err := checkFile(set.LocalPath(dir, file.Path), file)
		switch {
		case err == nil:
		case errors.Is(err, ErrMismatch):
			changed = append(changed, file)
			if firstChange == nil {
				firstChange = err
			}
		default:
			missing = append(missing, file)
		}
	}
	local := set.LocalPath(dir, path)
	switch {
	case len(missing) > 0 && len(files) == 1:
		return "", fmt.Errorf("the authors' file %s %s is not in the data folder: run `ideaflow data get %s` (or, offline, download %s and save it as %s)",
			set.Name, path, set.Name, set.URL(DefaultBaseURL, path), local)
	case len(missing) > 0:
		return "", fmt.Errorf("%d of the %d authors' files under %s %s are not in the data folder (%s, the first): run `ideaflow data get %s` (or, offline, download the folder from %s and put it at %s)",
			len(missing), len(files), set.Name, path, missing[0].Path, set.Name, set.TreeURL(), local)
	case len(changed) > 0:
		return "", fmt.Errorf("%w; it is not the authors' file at %s: run `ideaflow data get %s` to replace it", firstChange, set.Commit[:7], set.Name)
	}
	return local, nil
}

func examples(files []File) string {
	var names []string
	for i, f := range files {
		if i == 3 {
			names = append(names, fmt.Sprintf("... (%d in all)", len(files)))
			break
		}
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}
