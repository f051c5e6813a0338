package client

// Die stops renewing x's lease, as the death of its holder does: the fence then lapses when the
// lease runs out (for the tests of package client_test).
func (x *ExclusiveTable) Die() {
	x.stopRenew()
	<-x.renewed
}
