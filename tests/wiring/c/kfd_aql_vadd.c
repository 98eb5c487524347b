/* A client written against <linux/kfd_ioctl.h> alone, the way a runtime uses amdkfd: find the GPU in the KFD
 * topology, acquire its VM, allocate and map memory (GPU VA = CPU VA), load a code object (ELF, <elf.h>), create an
 * AQL queue, write a kernel-dispatch packet, ring the doorbell with a plain store and wait on the completion signal
 * by reading its value. It never calls the driver to make the GPU progress.
 *
 *   kfd_aql_vadd CODE_OBJECT   (the kernel: vadd(a, b, c), c[i] = a[i] + b[i], 256 work-items per group)
 *
 * Prints "vadd: N items ok, GPU time T ticks" and exits 0, or says what failed and exits 1.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOPOLOGY "/sys/devices/virtual/kfd/kfd/topology/nodes"
#define N 1024
#define RING_BYTES 4096
/* amd_queue_t (ROCr's hsa_queue_t + AMD fields): the offsets the CP reports to and polls */
#define AMD_QUEUE_WRITE_DISPATCH_ID 56
#define AMD_QUEUE_READ_DISPATCH_ID 128
#define AMD_QUEUE_READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET 136

struct dispatch_packet { /* hsa_kernel_dispatch_packet_t */
    uint16_t header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
    uint32_t grid_size_x, grid_size_y, grid_size_z, private_segment_size, group_segment_size;
    uint64_t kernel_object, kernarg_address, reserved2, completion_signal;
};

struct amd_signal { /* amd_signal_t */
    int64_t kind, value;
    uint64_t event_mailbox_ptr;
    uint32_t event_id, reserved1;
    uint64_t start_ts, end_ts, queue_ptr;
};

static int kfd, drm;
static uint32_t gpu_id;

static void die(const char *what) {
    fprintf(stderr, "kfd_aql_vadd: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static long read_number(const char *path, const char *key) {
    char line[256];
    long v = -1;
    FILE *f = fopen(path, "r");
    if (!f) die(path);
    while (fgets(line, sizeof line, f)) {
        char name[128];
        long x;
        if (!key && sscanf(line, "%ld", &x) == 1) v = x;
        else if (key && sscanf(line, "%127s %ld", name, &x) == 2 && strcmp(name, key) == 0) v = x;
    }
    fclose(f);
    return v;
}

/* GPU memory at a CPU address range reserved here, mapped on the GPU and, with cpu, into this process at the
 * same address. */
static void *gpu_alloc(size_t size, uint32_t flags, int cpu) {
    void *va = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) die("reserving a VA range");
    struct kfd_ioctl_alloc_memory_of_gpu_args a = {.va_addr = (uintptr_t)va, .size = size, .gpu_id = gpu_id,
                                                   .flags = flags | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE};
    if (ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a)) die("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU");
    uint32_t ids[1] = {gpu_id};
    struct kfd_ioctl_map_memory_to_gpu_args m = {.handle = a.handle, .device_ids_array_ptr = (uintptr_t)ids,
                                                 .n_devices = 1};
    if (ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m) || m.n_success != 1) die("AMDKFD_IOC_MAP_MEMORY_TO_GPU");
    if (cpu && mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, drm, (off_t)a.mmap_offset) != va)
        die("mmap of the render node at the GPU VA");
    return va;
}

/* The code object's loadable segments at their virtual addresses, in executable GPU memory; the kernel
 * descriptor `symbol` as a GPU address. */
static uint64_t load(const char *path, const char *symbol) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(path);
    unsigned char *elf = malloc(st.st_size);
    if (read(fd, elf, st.st_size) != st.st_size) die(path);
    close(fd);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_machine != EM_AMDGPU) die("not an AMDGPU code object");
    Elf64_Phdr *ph = (Elf64_Phdr *)(elf + eh->e_phoff);
    size_t size = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > size) size = ph[i].p_vaddr + ph[i].p_memsz;
    size = (size + 4095) & ~(size_t)4095;
    unsigned char *image = gpu_alloc(size, KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, 1);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD) memcpy(image + ph[i].p_vaddr, elf + ph[i].p_offset, ph[i].p_filesz);
    Elf64_Shdr *sh = (Elf64_Shdr *)(elf + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM && sh[i].sh_type != SHT_SYMTAB) continue;
        Elf64_Sym *sym = (Elf64_Sym *)(elf + sh[i].sh_offset);
        const char *names = (const char *)(elf + sh[sh[i].sh_link].sh_offset);
        for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++)
            if (strcmp(names + sym[j].st_name, symbol) == 0) return (uintptr_t)image + sym[j].st_value;
    }
    errno = 0;
    die(symbol);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: kfd_aql_vadd CODE_OBJECT\n");
        return 2;
    }
    /* the first GPU of the topology and its render node */
    char path[256];
    for (int node = 0;; node++) {
        snprintf(path, sizeof path, TOPOLOGY "/%d/gpu_id", node);
        if (access(path, R_OK)) die("no GPU in the KFD topology");
        if ((gpu_id = (uint32_t)read_number(path, NULL)) != 0) {
            snprintf(path, sizeof path, TOPOLOGY "/%d/properties", node);
            snprintf(path, sizeof path, "/dev/dri/renderD%ld", read_number(path, "drm_render_minor"));
            break;
        }
    }
    if ((kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC)) < 0) die("/dev/kfd");
    if ((drm = open(path, O_RDWR | O_CLOEXEC)) < 0) die(path);
    struct kfd_ioctl_get_version_args version = {0};
    if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version)) die("AMDKFD_IOC_GET_VERSION");
    struct kfd_ioctl_acquire_vm_args acquire = {.drm_fd = (uint32_t)drm, .gpu_id = gpu_id};
    if (ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &acquire)) die("AMDKFD_IOC_ACQUIRE_VM");

    uint64_t kernel = load(argv[1], "vadd.kd");
    float *a = gpu_alloc(N * 4, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1), *b = gpu_alloc(N * 4, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    float *c = gpu_alloc(N * 4, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 0.5f * (float)i, c[i] = -1.0f;
    uint64_t *kernargs = gpu_alloc(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    kernargs[0] = (uintptr_t)a, kernargs[1] = (uintptr_t)b, kernargs[2] = (uintptr_t)c;
    struct amd_signal *signal = gpu_alloc(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    signal->kind = 1; /* AMD_SIGNAL_KIND_USER */
    signal->value = 1;

    /* the AQL queue: ring and amd_queue_t in system memory */
    struct dispatch_packet *ring = gpu_alloc(RING_BYTES, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    unsigned char *queue = gpu_alloc(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT, 1);
    *(uint64_t *)(queue + 8) = (uintptr_t)ring;  /* hsa_queue_t.base_address */
    *(uint32_t *)(queue + 24) = RING_BYTES / 64; /* hsa_queue_t.size */
    *(uint32_t *)(queue + AMD_QUEUE_READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET) = AMD_QUEUE_READ_DISPATCH_ID;
    struct kfd_ioctl_create_queue_args q = {
        .ring_base_address = (uintptr_t)ring, .ring_size = RING_BYTES, .gpu_id = gpu_id,
        .queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, .queue_percentage = KFD_MAX_QUEUE_PERCENTAGE,
        .queue_priority = 7, .read_pointer_address = (uintptr_t)queue + AMD_QUEUE_READ_DISPATCH_ID,
        .write_pointer_address = (uintptr_t)queue + AMD_QUEUE_WRITE_DISPATCH_ID};
    if (ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &q)) die("AMDKFD_IOC_CREATE_QUEUE");
    unsigned char *doorbells = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
                                    (off_t)(q.doorbell_offset & ~0x1FFFULL));
    if (doorbells == MAP_FAILED) die("mmap of the doorbell page");
    volatile uint64_t *doorbell = (volatile uint64_t *)(doorbells + (q.doorbell_offset & 0x1FFF));

    /* the packet: body first, then header and setup in one release store (HSA's publication rule) */
    struct dispatch_packet p = {
        .workgroup_size_x = 256, .workgroup_size_y = 1, .workgroup_size_z = 1, .grid_size_x = N, .grid_size_y = 1,
        .grid_size_z = 1, .kernel_object = kernel, .kernarg_address = (uintptr_t)kernargs,
        .completion_signal = (uintptr_t)signal};
    memcpy((char *)&ring[0] + 4, (char *)&p + 4, sizeof p - 4);
    uint32_t header = 2 /* KERNEL_DISPATCH */ | 1 << 8 /* barrier */ | 2 << 9 | 2 << 11 /* system scopes */;
    __atomic_store_n((uint32_t *)&ring[0], header | 1u << 16 /* one dimension */, __ATOMIC_RELEASE);
    __atomic_store_n((uint64_t *)(queue + AMD_QUEUE_WRITE_DISPATCH_ID), 1, __ATOMIC_RELEASE);
    *doorbell = 1; /* a plain store into the doorbell page */

    struct timespec t0, now, pause = {0, 20000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(&signal->value, __ATOMIC_ACQUIRE) != 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60) {
            errno = ETIMEDOUT;
            die("waiting for the completion signal");
        }
        nanosleep(&pause, NULL);
    }
    for (int i = 0; i < N; i++)
        if (c[i] != a[i] + b[i]) {
            fprintf(stderr, "kfd_aql_vadd: c[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
            return 1;
        }
    printf("vadd: %d items ok, GPU time %llu ticks\n", N, (unsigned long long)(signal->end_ts - signal->start_ts));
    return 0;
}
