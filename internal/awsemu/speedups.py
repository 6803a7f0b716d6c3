# Loaded by moto_server's Python as sitecustomize (awsemu.Start puts its
# directory first on PYTHONPATH): three changes to how moto 5 spends its
# time, none to what it answers. Each is applied only where moto has the
# shape it was written for; the names of those applied are written to
# applied.txt beside this file, which Start reads. Anything unexpected
# leaves moto as installed. Being sitecustomize, it hides one that the
# Python installation may have (pyenv's, which moto_server runs under
# here, has none).
#
# Measured on one fault test of internal/e2e (a central and three regional
# pipeline runs, ~1,800 requests): moto_server took 18.9 s of CPU without
# them and 7.7 s with them.
import json
import os

_applied = []

# 1. Every request whose service moto infers from its signature asks
#    whether that service names a directory of moto's package, by listing
#    the package and testing each entry with stat(2): some 200 system calls
#    a request. The package does not change while the server runs.
try:
    import moto.backends as _backends

    if callable(getattr(_backends, "list_of_moto_modules", None)):
        _modules = tuple(_backends.list_of_moto_modules())
        _backends.list_of_moto_modules = lambda: _modules
        _applied.append("module-list")
except Exception:
    pass

try:
    import moto.iam.models as _iam

    # 2. With MOTO_IAM_LOAD_MANAGED_POLICIES (awsemu sets it: the deploy
    #    role attaches AdministratorAccess), each IAM backend made (one per
    #    account and partition) parses the same JSON of some 1,400 AWS
    #    managed policies again. It is parsed once here; each backend still
    #    makes its own policy objects from it, as moto does.
    if all(hasattr(_iam, n) for n in ("aws_managed_policies_data", "load_iam_aws_managed_policies", "AWSManagedPolicy")) and hasattr(_iam.IAMBackend, "_init_aws_policies"):
        _parsed = []

        def _init_aws_policies(self):
            if not _iam.load_iam_aws_managed_policies():
                return []
            if not _parsed:
                _parsed.append(json.loads(_iam.aws_managed_policies_data))
            return [_iam.AWSManagedPolicy.from_data(name, self.account_id, self.region_name, data) for name, data in _parsed[0].items()]

        _iam.IAMBackend._init_aws_policies = _init_aws_policies
        _applied.append("managed-policies-parsed-once")

    # 3. Every request finds the account its access key belongs to by
    #    asking each account's IAM backend of each partition (aws, aws-cn,
    #    aws-us-gov, ...) for the key, which makes every backend not made
    #    yet, managed policies and all: some 40 backends a test that no
    #    request ever uses. A backend not made holds no key, so only those
    #    made are asked here; the answer is the same.
    if all(hasattr(_iam, n) for n in ("get_account_id_from", "iam_backends", "PARTITION_NAMES", "DEFAULT_ACCOUNT_ID")):

        def get_account_id_from(access_key):
            for account_id, partitions in list(_iam.iam_backends.items()):
                for partition in _iam.PARTITION_NAMES:
                    backend = dict.get(partitions, partition)
                    if backend is not None and access_key in backend.access_keys:
                        return account_id
            return _iam.DEFAULT_ACCOUNT_ID

        _iam.get_account_id_from = get_account_id_from
        _applied.append("account-lookup-without-making-backends")
except Exception:
    pass

try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "applied.txt"), "w") as _f:
        _f.write("\n".join(_applied) + "\n")
except OSError:
    pass
