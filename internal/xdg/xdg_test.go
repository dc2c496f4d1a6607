package xdg

import "testing"

func TestResolve(t *testing.T) {
	got := Resolve(nil, "/home/u")
	want := Dirs{Config: "/home/u/.config/brig", State: "/home/u/.local/state/brig", Cache: "/home/u/.cache/brig"}
	if got != want {
		t.Fatalf("defaults: got %+v, want %+v", got, want)
	}
	got = Resolve([]string{"XDG_CONFIG_HOME=/c", "XDG_STATE_HOME=relative", "XDG_CACHE_HOME=/k"}, "/home/u")
	want = Dirs{Config: "/c/brig", State: "/home/u/.local/state/brig", Cache: "/k/brig"}
	if got != want {
		t.Fatalf("overrides (a relative value is ignored, as the spec says): got %+v, want %+v", got, want)
	}
}
