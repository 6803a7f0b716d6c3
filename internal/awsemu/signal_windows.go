package awsemu

import "os"

var interruptSignal = os.Kill
