package cache

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"
)

// badgerLogger adapts zerolog to Badger's logger. Badger's lines never reach
// a researcher's console unless it asked for debug: its warnings are about
// its own tuning ("Block cache might be too small", "Unable to fill tables"
// during a compaction) and its errors come back to the cache as errors,
// which the cache reports in its own words (ErrCorrupt, ErrDiskFull, ...).
// So errors and warnings go to debug, and its routine work (table loads,
// compactions, at info and debug) to trace.
type badgerLogger struct{ log zerolog.Logger }

func (l badgerLogger) emit(e *zerolog.Event, format string, args []any) {
	// Badger's messages end in newlines that zerolog would keep.
	e.Str("component", "badger").Msg(strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (l badgerLogger) Errorf(format string, args ...any) {
	if strings.HasPrefix(format, "Unable to read") || strings.HasPrefix(format, "Key: ") {
		// A value that fails its checksum: the cache reports the damaged
		// record itself (ErrCorrupt), by key, once.
		l.emit(l.log.Trace(), format, args)
		return
	}
	l.emit(l.log.Debug(), format, args)
}

func (l badgerLogger) Warningf(format string, args ...any) {
	l.emit(l.log.Debug(), format, args)
}

func (l badgerLogger) Infof(format string, args ...any) {
	l.emit(l.log.Trace(), format, args)
}

func (l badgerLogger) Debugf(format string, args ...any) {
	l.emit(l.log.Trace(), format, args)
}
