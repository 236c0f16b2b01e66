package main

// Equivalent is a single-line change that survived an earlier mutation
// run and that no test can kill, because another mechanism already does
// what the line does. Each is listed with the reason and with what covers
// the property instead; they are not run. Target is text that must still
// be in File (checked by this package's test, like the mutations'), so an
// explanation cannot outlive the code it explains.
type Equivalent struct {
	Name   string
	File   string
	Target string
	Change string
	Why    string
}

// Equivalents are the known equivalent mutants (issue 17).
var Equivalents = []Equivalent{
	{
		Name:   "jail-watchdog-group-kill",
		File:   "pkg/jail/runner.go",
		Target: "_ = syscall.Kill(-w.tr.pgid, syscall.SIGKILL)",
		Change: "drop the watchdog's kill(-pgid)",
		Why: "the watchdog also kills the direct child and then every process of the step: with a cgroup, every " +
			"process in it (nothing of the step can leave it); without, every process the tracker finds (its process " +
			"group, its descendants, the carriers of the run token). After the child is reaped, cgroup.killAll or the " +
			"sweep repeats that until nothing of the step is left, or fails the run. The group kill only makes the " +
			"first round faster; that a step's processes all die is tested live (pkg/jail's sweep, double-fork and " +
			"daemon tests), and the group itself by TestStepLeadsItsOwnProcessGroup (mutation " +
			"jail-step-not-in-own-process-group).",
	},
	{
		Name:   "jail-cgroup-reap-group-kill",
		File:   "pkg/jail/runner.go",
		Target: "_ = syscall.Kill(-tr.pgid, syscall.SIGKILL)\n\t\t_, sweepErr = cg.killAll()",
		Change: "drop the kill(-pgid) before the cgroup is emptied after the step",
		Why: "cg.killAll, on the next line, kills every process in the step's cgroup until it is empty (or fails " +
			"the run), and every process of the group is in the cgroup: a child inherits it, and the jailed step " +
			"cannot write to the cgroup filesystem to leave.",
	},
	{
		Name:   "jail-sweep-group-kill",
		File:   "pkg/jail/runner.go",
		Target: "_ = syscall.Kill(-tr.pgid, syscall.SIGKILL)\n\t\ttime.Sleep(",
		Change: "drop the sweep's kill(-pgid) between rounds",
		Why: "each round of the sweep re-reads the process table and kills every member it finds, the process group " +
			"included (tracker.members), and loops until none is left or fails the run after 100 rounds: the group " +
			"kill between rounds is redundant with the next round.",
	},
	{
		Name:   "action-retire-without-reread",
		File:   "pkg/action/run.go",
		Target: "rc, err := evidence.VerifyReceiptFile(res.ReceiptPath)",
		Change: "retire the working ledger without re-reading the receipt (or without comparing its chain)",
		Why: "Persist, which ran just before, already re-verifies the receipt as written on disk and fails unless it " +
			"verifies (killed: persist-round-trip-unchecked, by TestPersistRoundTripFailure), and the receipt was " +
			"built in the same process from the ledger's own entries, so its chain is the ledger's. The re-read is a " +
			"second look with no way, short of another process rewriting the file in between, to see anything else.",
	},
	{
		Name:   "action-ledger-break-forces-fail",
		File:   "pkg/action/run.go",
		Target: "if chain.Break != nil {\n\t\ta.Outcome = evidence.OutcomeFail",
		Change: "do not force GOVERNED_FAIL when the run's own ledger does not re-link",
		Why: "the entries are the ledger's in-memory copy, appended by this process, so they cannot break short of a " +
			"bug in the ledger itself; and were they broken, BuildReceipt refuses to sign a chain that does not verify " +
			"(TestBuildAndPersistRefuseBrokenChains), conclude then records the persist error and sets GOVERNED_FAIL, " +
			"and the exit status is 1 (TestDefaultExitCode, action-exit-0-without-receipt).",
	},
}
