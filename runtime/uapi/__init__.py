"""runtime.uapi: the kernel ABI written once: amdkfd ioctl numbers and structs (kfd_ioctl.h) and the
DRM AMDGPU_INFO queries, as ctypes structures.

May import: nothing outside the standard library.
"""
