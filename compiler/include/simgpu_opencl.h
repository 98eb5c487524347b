/* simgpu_opencl.h: the OpenCL C work-item functions for kernels built with clang's -nogpulib, where the ROCm
 * device libraries (which normally define them) are absent. Each is one AMDGPU builtin: ids from the
 * hardware registers, sizes from the code object v5 hidden kernel arguments the runtime fills in.
 * compiler.opencl.compile_opencl() adds this header's directory to the include path. */
#ifndef SIMGPU_OPENCL_H
#define SIMGPU_OPENCL_H

#define SIMGPU_OCL_FN static inline __attribute__((overloadable, always_inline))

SIMGPU_OCL_FN size_t get_local_id(uint dim) {
  return dim == 0 ? __builtin_amdgcn_workitem_id_x() : dim == 1 ? __builtin_amdgcn_workitem_id_y()
       : dim == 2 ? __builtin_amdgcn_workitem_id_z() : 0;
}
SIMGPU_OCL_FN size_t get_group_id(uint dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_id_x() : dim == 1 ? __builtin_amdgcn_workgroup_id_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_id_z() : 0;
}
SIMGPU_OCL_FN size_t get_local_size(uint dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_size_x() : dim == 1 ? __builtin_amdgcn_workgroup_size_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_size_z() : 1;
}
/* The number of workgroups: hidden_block_count_{x,y,z}, the first three dwords of the implicit arguments. */
SIMGPU_OCL_FN size_t get_num_groups(uint dim) {
  return dim < 3 ? ((__constant uint *)__builtin_amdgcn_implicitarg_ptr())[dim] : 1;
}
SIMGPU_OCL_FN size_t get_global_id(uint dim) { return get_group_id(dim) * get_local_size(dim) + get_local_id(dim); }
SIMGPU_OCL_FN size_t get_global_size(uint dim) { return get_num_groups(dim) * get_local_size(dim); }
SIMGPU_OCL_FN uint get_work_dim(void) {
  return ((__constant ushort *)__builtin_amdgcn_implicitarg_ptr())[32];  /* hidden_grid_dims at byte 64 */
}

/* barrier(CLK_LOCAL_MEM_FENCE): release the workgroup's memory, wait for every wave, acquire it again. */
SIMGPU_OCL_FN void barrier(uint flags) {
  (void)flags;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

#endif
