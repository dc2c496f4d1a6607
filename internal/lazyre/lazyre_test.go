package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatal("the expression does not match as written")
	}
	if re() != first {
		t.Fatal("a second call compiled the expression again")
	}
	bad := New(`(`) // not compiled yet: no panic here
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic at first use")
		}
	}()
	bad()
}
