package fleet

// CheckBeside is checkBeside, for the tests of package fleet_test.
var CheckBeside = checkBeside
