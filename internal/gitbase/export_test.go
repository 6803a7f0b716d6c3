package gitbase

import "github.com/go-git/go-git/v5/plumbing/format/index"

// DecodeIndex is decodeIndex, for the tests that hold it to go-git's.
var DecodeIndex = decodeIndex

// LargeObject is the size past which objects are streamed.
const LargeObject = largeObject

// TreesRead is how many trees CheckedOutBlobHashes read from the commit.
func (r *Repo) TreesRead() int64 { return r.treesRead.Load() }

// DecodedIndex is the index the handle read (nil without one).
func (r *Repo) DecodedIndex() *index.Index { return r.vouched().idx }
