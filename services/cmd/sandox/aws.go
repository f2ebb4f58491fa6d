package main

import (
	"os"

	"github.com/sandox/sandox/services/data/awsenv"
)

// awsLabel carries the digest of sandox-data's AWS settings, so that
// `sandox up` recreates the container when the operator's AWS_* variables
// or shared files changed (ensureRunning compares labels).
const awsLabel = "dev.sandox.aws-settings"

// dataAWS returns the operator's AWS settings for sandox-data, and for no
// other container: its AWS_* variables, and copies of the shared config and
// credentials files (AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE, else
// ~/.aws/config and ~/.aws/credentials) for dataCredsDir, where they are
// copied readable by the service's uid only, like its other secrets, so
// that s3:// population sources authenticate as the operator's AWS tools
// would (docs/databases.md).
func dataAWS() (awsenv.Settings, error) {
	return awsenv.ForContainer(os.Environ(), dataCredsDir)
}
