package action

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
)

// Receipt ids and artifact names must be unique per job execution: two
// matrix legs run the same job id in the same run and attempt, a re-run
// keeps the run id, and two callers of one reusable workflow run the same
// job id too. What a composite action can see of that (the runner's
// action schema allows the github, strategy, matrix, job, runner, steps
// and env contexts in a composite step's env) is passed in by action.yml:
//
//   - EnvMatrix: toJSON(matrix), "null" outside a matrix; distinct for
//     every leg of one job and the same in every attempt;
//   - EnvCheckRunID: job.check_run_id, the id of the job's check run,
//     distinct for every job execution (every leg, every caller, every
//     attempt). GitHub Enterprise Server does not provide it (empty).
//
// Their hash, the job key, joins the job id in the default session id and
// artifact name; the run attempt (GITHUB_RUN_ATTEMPT) is in both as well.
const (
	EnvMatrix     = "DEPONENT_MATRIX"
	EnvCheckRunID = "DEPONENT_CHECK_RUN_ID"
)

// EnvCgroup names a cgroup v2 directory action.yml delegated to this job
// (jail.Options.Cgroup), with the binary's own process already in a leaf
// of it, so each step gets a kernel memory and task limit. Empty: the jail
// creates one itself where it may (as root) or polls resident memory.
const EnvCgroup = "DEPONENT_CGROUP"

// ArtifactPrefix starts every default artifact name, so that a verify job
// can download them by pattern (deponent-receipts-*).
const ArtifactPrefix = "deponent-receipts-"

// jobKey is "k" and the first 8 hex digits of the sha256 of the matrix
// and the check run id, or "" when neither is known (a job outside a
// matrix on GitHub Enterprise Server, or the binary run without
// action.yml).
func jobKey(getenv Getenv) string {
	m := strings.TrimSpace(getenv(EnvMatrix))
	if m == "null" {
		m = ""
	}
	id := strings.TrimSpace(getenv(EnvCheckRunID))
	if m == "" && id == "" {
		return ""
	}
	h := sha256.Sum256([]byte("matrix\x00" + m + "\x00check_run_id\x00" + id))
	return "k" + hex.EncodeToString(h[:4])
}

// defaultArtifactName is the artifact name the binary reports (output
// artifact-name) and action.yml's upload step uses when the input is
// empty: deponent-receipts-<job>[-<key>][-<n>]-<attempt> for a derived
// session id, where n is the session's suffix when the action ran before
// in the same job; deponent-receipts-<session>[-<key>]-<attempt> for a
// given one. The attempt is always last, so deponent-receipts-*-<attempt>
// selects one attempt. "" outside Actions (nothing is uploaded there).
func defaultArtifactName(getenv Getenv, session string, derived bool, use int) string {
	job := getenv("GITHUB_JOB")
	if getenv("GITHUB_ACTIONS") != "true" && job == "" {
		return ""
	}
	var parts []string
	if derived {
		parts = append(parts, firstNonEmpty(sanitizeName(job), "job"))
		if k := jobKey(getenv); k != "" {
			parts = append(parts, k)
		}
		if use > 1 {
			parts = append(parts, strconv.Itoa(use))
		}
	} else {
		parts = append(parts, session)
		if k := jobKey(getenv); k != "" {
			parts = append(parts, k)
		}
	}
	if a := sanitizeName(getenv("GITHUB_RUN_ATTEMPT")); a != "" {
		parts = append(parts, a)
	}
	tail := strings.Join(parts, "-")
	if len(tail) > maxArtifactTail {
		// Keep the end: the key and the attempt are what make it unique.
		tail = strings.TrimLeft(tail[len(tail)-maxArtifactTail:], "._-")
	}
	return ArtifactPrefix + tail
}

// maxArtifactTail keeps default artifact names short enough to read.
const maxArtifactTail = 180

// cgroupDir is EnvCgroup when it names an absolute directory, else "" (the
// jail's own choice). A value that is not absolute is not what action.yml
// writes; the jail would refuse it, so it is dropped here, and the entries
// record the guard that applied instead.
func cgroupDir(getenv Getenv) string {
	d := strings.TrimSpace(getenv(EnvCgroup))
	if !filepath.IsAbs(d) {
		return ""
	}
	return filepath.Clean(d)
}
