// Package disks gives each sandbox a hard limit on what it can write: an
// ext4 file system of a fixed size, kept in a sparse image file and attached
// to a loop device. Writing past the size fails inside the sandbox with
// ENOSPC ("no space left on device") and touches nothing outside the image.
//
// # Why a loop device
//
// A sandbox's only writable place is its /workspace volume, so limiting
// that volume limits the sandbox. Docker's own means do not work here:
// `--storage-opt size` needs the daemon's data root on xfs mounted with
// pquota (this host runs ext4), and the local volume driver refuses the
// `o=loop` mount option. It does accept a block device, so a Pool makes the
// image, formats it, attaches it to /dev/loopN, and the orchestrator
// creates a `local` volume with the options type=ext4 and
// device=/dev/loopN. The daemon mounts the device when a container uses the
// volume and unmounts it when the container stops.
//
// The loop device is attached without LO_FLAGS_AUTOCLEAR, so it survives
// that unmount and the volume can be mounted again when the sandbox is
// restarted. Pool.Detach releases it once the container and the volume are
// gone; while the daemon still has the file system mounted it reports
// ErrBusy. Pool.List finds images left behind by a previous run of the
// orchestrator so they can be attached again or removed.
//
// Images are sparse: an image takes host disk only for what has been
// written to it (and the ext4 metadata). Attach refuses an image larger
// than the free space of the directory's file system, but it reserves
// nothing, so images made one by one can together promise more than the
// host has.
//
// # What the host must allow
//
// The process needs root or CAP_SYS_ADMIN (to attach loop devices and, when
// a device node is missing, CAP_MKNOD to create it), a /dev/loop-control
// (the loop driver), and mkfs.ext4 and debugfs on its PATH. Run in a
// container, it needs CAP_SYS_ADMIN and CAP_MKNOD, device cgroup rules for
// the loop devices (block major 7) and /dev/loop-control (char 10:237), the
// host's /dev bind-mounted, so that the devices it attaches are the ones the
// Docker daemon mounts, and Dir bind-mounted from the host at the same path.
// (--privileged would do too, where the engine can grant every capability.)
// Pool.Check reports which of these is missing.
//
// # Layout and journal
//
// Images are formatted with 4 KiB blocks, one inode per 16 KiB and no
// blocks reserved for root, so that nearly all of a limit is the sandbox's
// to fill: a 32 MiB disk holds about 30 MiB of files. Disks of 256 MiB or
// more keep an ext4 journal (a host crash then costs a journal replay, not
// an fsck, before the volume mounts again); smaller ones have none, since
// the journal's 4 MiB minimum would be a large share of them. Sizes below
// 16 MiB are refused.
package disks
