/* Test-only: keeps every Vulkan driver (ICD) loaded until the process exits, so that
 * LeakSanitizer sees memory the driver holds in its own globals as reachable.
 *
 * Why: Mesa's lavapipe allocates, once per process (its CPU detection, on AMD Zen only:
 * the L3-cache affinity masks), a block it keeps in a global and never frees. The Vulkan
 * loader unloads the ICD at vkDestroyInstance; LeakSanitizer, running at exit, then finds
 * the block referenced from nowhere and reports a "leak" in an unknown module that no
 * suppression can name. A real program keeps running past that point (the driver's block
 * is not ours, and not growing), so the test programs do what a long-lived process would:
 * the driver stays mapped. This file is linked only into test programs, never into the
 * library; it interposes vkDestroyInstance (the executable's definition wins over
 * libvulkan's), pins the loaded ICDs with RTLD_NODELETE, then calls the loader's.
 * It pins ICDs only (objects that export vk_icdGetInstanceProcAddr), not the loader or
 * the layers, and changes nothing for tdispatch's own allocations. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

#include <vulkan/vulkan.h>

static int pin_icd(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return 0;
    if (dlsym(h, "vk_icdGetInstanceProcAddr") != NULL) {
        void *pinned = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        (void)pinned; /* the reference is kept on purpose: the ICD stays for the process's life */
    }
    dlclose(h);
    return 0;
}

VKAPI_ATTR void VKAPI_CALL vkDestroyInstance(VkInstance instance, const VkAllocationCallbacks *allocator)
{
    dl_iterate_phdr(pin_icd, NULL);
    PFN_vkDestroyInstance next = (PFN_vkDestroyInstance)dlsym(RTLD_NEXT, "vkDestroyInstance");
    if (next != NULL)
        next(instance, allocator);
}
