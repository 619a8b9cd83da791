// Package pack reads and writes packs: one file that rebuilds one output of
// an experiment (a report, table or plot) with no model call. A pack holds
// the experiment's files, the data files it reads (or, past a size limit,
// their digests and where they were), the variable values of the run, a
// cache bundle of exactly the records the output depends on, and a manifest
// of the digests of all of them.
//
// Layout, uncompressed (its contents are mostly compressed already: the
// bundle is gzip):
//
//	header   "ideaflow-pack" + version byte 1
//	entries  'F' + uint16 BE name length + name + uint64 BE size + bytes;
//	         manifest.json first, then the others in name order
//	trailer  'T' + SHA-256 of every byte before it
//
// A pack is refused whole when any byte differs: the trailer covers every
// byte, and every entry's digest is in the manifest, so a refusal can name
// the entry that changed. As for bundles (cache/bundle.go), the trailer
// digest is the pack's identity; it authenticates a pack only when it
// reaches the receiver by another channel.
package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

const (
	magic   = "ideaflow-pack"
	version = 1
	// ManifestName is the first entry.
	ManifestName = "manifest.json"
	// BundleName is the entry holding the records (a cache bundle).
	BundleName = "records.bundle"
	// ExperimentDir prefixes the experiment's files.
	ExperimentDir = "experiment/"
)

// ErrRefused is wrapped by every error of Read.
var ErrRefused = errors.New("pack refused")

// Manifest says what a pack holds and what it rebuilds.
type Manifest struct {
	Format     int    `json:"format"`
	Experiment string `json:"experiment"`
	// Root is the base name of the experiment's folder: unpack recreates
	// it, since an experiment is named after its folder. Main is the
	// experiment's file for a one-file experiment ("" for a folder).
	Root string `json:"root"`
	Main string `json:"main,omitempty"`
	// Output is the address of the output the pack rebuilds (report.table1).
	Output string `json:"output"`
	// GitCommit is the experiment's commit when packed (reports name it).
	GitCommit string `json:"git_commit,omitempty"`
	// Variables are the -var values of the run, as HCL literals.
	Variables map[string]string `json:"variables,omitempty"`
	// Records counts the records in the bundle; BundleDigest is the
	// bundle's own digest (what `cache import --expect` checks).
	Records      int    `json:"records"`
	BundleDigest string `json:"bundle_digest"`
	// Files maps every other entry's name to the SHA-256 of its bytes.
	Files map[string]string `json:"files"`
	// External lists files the pack does not carry (over the size limit):
	// the receiver puts them at Path (relative to the experiment) and the
	// unpack checks their digest.
	External []External `json:"external,omitempty"`
}

// External is a data file left out of a pack.
type External struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Source says where to get the same bytes, when they are a pinned
	// file of a benchmark's repository (`ideaflow data get SET`); empty:
	// no known source, the packer must send the file beside the pack.
	Source string `json:"source,omitempty"`
}

// Write encodes a pack of the manifest and entries (name -> bytes); it fills
// m.Files. Equal inputs give equal bytes.
func Write(m *Manifest, entries map[string][]byte) ([]byte, error) {
	m.Format = version
	m.Files = map[string]string{}
	for name, b := range entries {
		if name == ManifestName {
			return nil, fmt.Errorf("pack entry %q is reserved", name)
		}
		m.Files[name] = digest(b)
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString(magic)
	buf.WriteByte(version)
	put := func(name string, b []byte) {
		buf.WriteByte('F')
		buf.Write(binary.BigEndian.AppendUint16(nil, uint16(len(name))))
		buf.WriteString(name)
		buf.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		buf.Write(b)
	}
	put(ManifestName, append(mb, '\n'))
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if len(name) > 0xffff {
			return nil, fmt.Errorf("pack entry name too long (%d bytes, at most 65535): it starts %.40q", len(name), name)
		}
		put(name, entries[name])
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.WriteByte('T')
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// Digest is a pack's identity: its trailer digest, "sha256:<hex>".
func Digest(b []byte) string {
	if len(b) < sha256.Size {
		return ""
	}
	return "sha256:" + hex.EncodeToString(b[len(b)-sha256.Size:])
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Read checks a whole pack and returns its manifest and entries. Any damage
// refuses it whole, with an error wrapping ErrRefused that names what
// changed when it can tell: an entry whose bytes no longer match the
// manifest, the manifest itself, the framing, or the trailer.
func Read(b []byte) (*Manifest, map[string][]byte, error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s (nothing was unpacked)", ErrRefused, fmt.Sprintf(format, args...))
	}
	head := len(magic) + 1
	if len(b) < head+1+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, nil, refuse("not an ideaflow pack (header)")
	}
	if b[len(magic)] != version {
		return nil, nil, refuse("pack format version %d is not supported (this ideaflow reads version %d), or the header is damaged", b[len(magic)], version)
	}
	entries := map[string][]byte{}
	var order []string
	pos, trailerAt := head, -1
	framing := ""
	for pos < len(b) {
		switch b[pos] {
		case 'T':
			if len(b)-pos == 1+sha256.Size {
				trailerAt = pos
				pos = len(b)
				continue
			}
			framing = fmt.Sprintf("trailer at byte %d is not at the end", pos)
		case 'F':
			if pos+3 > len(b) {
				framing = "entry header cut short"
				break
			}
			n := int(binary.BigEndian.Uint16(b[pos+1:]))
			if pos+3+n+8 > len(b) {
				framing = fmt.Sprintf("entry at byte %d runs past the end", pos)
				break
			}
			name := string(b[pos+3 : pos+3+n])
			size := binary.BigEndian.Uint64(b[pos+3+n:])
			start := pos + 3 + n + 8
			if size > uint64(len(b)-start) {
				framing = fmt.Sprintf("entry %q claims %d bytes, past the end", name, size)
				break
			}
			if _, dup := entries[name]; dup {
				framing = fmt.Sprintf("entry %q twice", name)
				break
			}
			entries[name] = b[start : start+int(size)]
			order = append(order, name)
			pos = start + int(size)
			continue
		default:
			framing = fmt.Sprintf("unknown frame 0x%02x at byte %d", b[pos], pos)
		}
		break
	}
	var m Manifest
	mb, hasManifest := entries[ManifestName]
	manifestOK := hasManifest && len(order) > 0 && order[0] == ManifestName && json.Unmarshal(mb, &m) == nil && m.Files != nil
	// What changed, as far as the manifest tells.
	var changed []string
	if manifestOK {
		for _, name := range order[1:] {
			want, ok := m.Files[name]
			switch {
			case !ok:
				changed = append(changed, fmt.Sprintf("%s is not in the manifest", name))
			case want != digest(entries[name]):
				changed = append(changed, fmt.Sprintf("%s differs from its manifest digest", name))
			}
		}
		for name := range m.Files {
			if _, ok := entries[name]; !ok && framing == "" {
				changed = append(changed, fmt.Sprintf("%s is missing", name))
			}
		}
		slices.Sort(changed)
	}
	switch {
	case framing != "":
		return nil, nil, refuse("damaged framing: %s", framing)
	case trailerAt < 0:
		return nil, nil, refuse("no trailer: the pack is cut short")
	case !manifestOK:
		return nil, nil, refuse("%s is damaged or missing", ManifestName)
	}
	sum := sha256.Sum256(b[:trailerAt])
	if !bytes.Equal(sum[:], b[trailerAt+1:]) {
		if len(changed) > 0 {
			return nil, nil, refuse("%s", strings.Join(changed, "; "))
		}
		return nil, nil, refuse("its bytes do not hash to its trailer digest: %s or an entry's name or size changed, or the trailer itself", ManifestName)
	}
	if len(changed) > 0 {
		// A pack whose trailer was recomputed over an edited entry.
		return nil, nil, refuse("%s", strings.Join(changed, "; "))
	}
	delete(entries, ManifestName)
	return &m, entries, nil
}
