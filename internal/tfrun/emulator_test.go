package tfrun

import "testing"

// TestEmulatorEndpointIsOnlyALoopbackHost: only a loopback endpoint gets
// the emulator's overrides, which skip checks a real AWS endpoint keeps.
func TestEmulatorEndpointIsOnlyALoopbackHost(t *testing.T) {
	for endpoint, emulator := range map[string]bool{
		"http://127.0.0.1:5000": true, "http://localhost:5000": true, "http://[::1]:5000": true, "http://127.8.9.1": true,
		"": false, "https://vpce-1.sts.eu-west-1.vpce.amazonaws.com": false, "http://10.0.0.1:5000": false,
		"http://localhost.example.com": false, "http://127.0.0.1.nip.io": false, "not a url": false, "127.0.0.1:5000": false,
	} {
		if got := EmulatorEndpoint(endpoint) != ""; got != emulator {
			t.Errorf("EmulatorEndpoint(%q) names an emulator: %v, want %v", endpoint, got, emulator)
		}
	}
}
