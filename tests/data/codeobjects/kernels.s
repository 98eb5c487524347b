.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.text
.globl copy
.p2align 8
.type copy,@function
copy:
  s_load_b128 s[0:3], s[0:1], 0x0
  v_lshlrev_b32 v0, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_b32 v1, v0, s[2:3]
  s_waitcnt vmcnt(0)
  global_store_b32 v0, v1, s[0:1]
  s_endpgm
.Lcopy_end:
.size copy, .Lcopy_end-copy
.rodata
.p2align 6
.amdhsa_kernel copy
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 4
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 16
.end_amdhsa_kernel
.text
.globl wide
.p2align 8
.type wide,@function
wide:
  s_endpgm
.Lwide_end:
.size wide, .Lwide_end-wide
.rodata
.p2align 6
.amdhsa_kernel wide
  .amdhsa_next_free_vgpr 37
  .amdhsa_next_free_sgpr 20
  .amdhsa_user_sgpr_dispatch_ptr 1
  .amdhsa_user_sgpr_queue_ptr 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 64
  .amdhsa_group_segment_fixed_size 4096
  .amdhsa_system_sgpr_workgroup_id_y 1
  .amdhsa_system_sgpr_workgroup_id_z 1
  .amdhsa_system_vgpr_workitem_id 2
.end_amdhsa_kernel
.text
.globl wave64
.p2align 8
.type wave64,@function
wave64:
  s_endpgm
.Lwave64_end:
.size wave64, .Lwave64_end-wave64
.rodata
.p2align 6
.amdhsa_kernel wave64
  .amdhsa_next_free_vgpr 9
  .amdhsa_next_free_sgpr 4
  .amdhsa_wavefront_size32 0
  .amdhsa_user_sgpr_dispatch_id 1
  .amdhsa_user_sgpr_private_segment_size 1
  .amdhsa_private_segment_fixed_size 256
  .amdhsa_enable_private_segment 1
  .amdhsa_system_sgpr_workgroup_id_x 0
.end_amdhsa_kernel
