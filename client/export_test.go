package client

// Die stops renewing x's lease, as the death of its holder does: the fence then lapses when the
// lease runs out (for the tests of package client_test).
func (x *ExclusiveTable) Die() {
	x.stopRenew()
	<-x.renewed
}

// TrustView makes t's handle trust the view of the directory it holds as if it had just read it:
// a handle whose last read came just before a rebucket's step was recorded.
func (t *Table) TrustView() { t.rt.TrustView() }
