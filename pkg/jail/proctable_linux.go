package jail

import (
	"bytes"
	"os"
	"strconv"
)

// snapshotProcs reads the host's process table from /proc. With a token, it
// also marks processes whose environment carries it (unreadable environments
// of other users' processes are skipped: they cannot carry our token unless
// they are ours).
func snapshotProcs(token string) (procTable, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	page := int64(os.Getpagesize())
	var needle []byte
	if token != "" {
		needle = []byte(runTokenVar + "=" + token + "\x00")
	}
	tab := make(procTable, len(names))
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		if _, err := strconv.Atoi(name); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		p, err := parseProcStat(data, page)
		if err != nil {
			continue
		}
		if needle != nil {
			if env, err := os.ReadFile("/proc/" + name + "/environ"); err == nil {
				p.hasToken = bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...))
			}
		}
		tab[p.pid] = p
	}
	return tab, nil
}
