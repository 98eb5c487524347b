/* <linux/kfd_ioctl.h> includes <drm/drm.h> (Debian: libdrm-dev) but uses nothing of it beyond the kernel's integer
 * types. The test compiles with -idirafter pointing here, so the real header wins when it is installed. */
#ifndef SIMGPU_TEST_DRM_H
#define SIMGPU_TEST_DRM_H
#include <linux/ioctl.h>
#include <linux/types.h>
#endif
