//go:build !linux && !darwin && !freebsd

package bridge

import "net"

// maxSunPath is the smallest sun_path of the other systems (104 on the BSDs; Windows'
// AF_UNIX has 108).
const maxSunPath = 104

// peerUID: these systems give pi-lsp no peer credentials (errNoPeerCred); checkPeer
// falls back to the socket file's owner.
func peerUID(net.Conn) (int, error) { return 0, errNoPeerCred }
