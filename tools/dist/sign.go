package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Signatures: SHA256SUMS is signed with an SSH key (OpenSSH's
// `ssh-keygen -Y sign`, in a namespace of regionctl's own), so that an
// installer holding the project's public key (an allowed_signers line)
// trusts every release's checksums without pinning each one's hash. The
// install script (docs/ci/install-regionctl.sh) verifies it with
// `ssh-keygen -Y verify` as SignerIdentity.
const (
	signatureFile = checksumsFile + ".sig"
	// SignatureNamespace keeps a release signature from being valid for
	// anything else the key signs (and the reverse).
	SignatureNamespace = "regionctl-release"
	// SignerIdentity is the principal of the release key in an
	// allowed_signers file.
	SignerIdentity = "releases@regionctl.dev"
)

// sign writes dir's SHA256SUMS.sig with the private key at key, then
// checks it with the key's public half as an installer would.
func sign(dir, key string) error {
	sums := filepath.Join(dir, checksumsFile)
	cmd := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-f", key, "-n", SignatureNamespace, sums)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("signing %s: %v\n%s", checksumsFile, err, out)
	}
	pub, err := exec.Command("ssh-keygen", "-y", "-f", key).Output()
	if err != nil {
		return fmt.Errorf("the public half of %s: %v", key, err)
	}
	line := AllowedSigners(strings.TrimSpace(string(pub)))
	if err := verifySignature(dir, line); err != nil {
		return err
	}
	// What installers pin once (REGIONCTL_ALLOWED_SIGNERS).
	fmt.Fprintf(os.Stderr, "dist: %s signed; installers pin: %s\n", checksumsFile, line)
	return nil
}

// AllowedSigners is the allowed_signers line of a release public key (as
// `ssh-keygen -y` prints it): what installers pin.
func AllowedSigners(publicKey string) string {
	return SignerIdentity + ` namespaces="` + SignatureNamespace + `" ` + publicKey
}

// verifySignature checks dir's SHA256SUMS.sig against allowedSigners.
func verifySignature(dir, allowedSigners string) error {
	f, err := os.CreateTemp("", "allowed_signers")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(allowedSigners + "\n"); err != nil {
		f.Close()
		return err
	}
	f.Close()
	sums, err := os.Open(filepath.Join(dir, checksumsFile))
	if err != nil {
		return err
	}
	defer sums.Close()
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", f.Name(), "-I", SignerIdentity, "-n", SignatureNamespace, "-s", filepath.Join(dir, signatureFile))
	cmd.Stdin = sums
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s does not verify: %v\n%s", signatureFile, err, out)
	}
	return nil
}
