package gitbase

// DecodeIndex is decodeIndex, for the tests that hold it to go-git's.
var DecodeIndex = decodeIndex

// LargeObject is the size past which objects are streamed.
const LargeObject = largeObject
