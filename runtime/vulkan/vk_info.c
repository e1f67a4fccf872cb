/* Vulkan backend: device enumeration (name, driver, memory, software or not) without opening a device. */
#include <stdio.h>

#include "vk_internal.h"

td_status td_vulkan_device_count(int *count)
{
    *count = 0;
    VkInstance inst;
    if (vk_instance_get(&inst) != TD_OK) {
        td_clear_error(); /* no Vulkan driver or loader here: no devices */
        return TD_OK;
    }
    uint32_t n = 0;
    const VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
    vk_instance_put();
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return vk_fail("device_count", "vkEnumeratePhysicalDevices", r);
    *count = (int)n;
    return TD_OK;
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "software (CPU)";
    default: return "other";
    }
}

static bool has_extension(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *all = td_malloc(sizeof *all * n);
    if (all == NULL)
        return false;
    bool found = false;
    VkResult r = vkEnumerateDeviceExtensionProperties(phys, NULL, &n, all);
    for (uint32_t i = 0; (r == VK_SUCCESS || r == VK_INCOMPLETE) && i < n && !found; i++)
        found = strcmp(all[i].extensionName, name) == 0;
    td_free(all);
    return found;
}

static void describe(VkPhysicalDevice phys, td_device_info *out)
{
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(phys, &p);
    snprintf(out->name, sizeof out->name, "%.255s", p.deviceName);
    snprintf(out->type, sizeof out->type, "%s", type_name(p.deviceType));
    out->software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const uint32_t api = p.apiVersion;
    if (api >= VK_API_VERSION_1_1 && has_extension(phys, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME)) {
        VkPhysicalDeviceDriverProperties drv = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES };
        VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &drv };
        vkGetPhysicalDeviceProperties2(phys, &p2);
        snprintf(out->driver, sizeof out->driver, "%.60s: %.160s, Vulkan %u.%u.%u", drv.driverName, drv.driverInfo,
                 VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    } else {
        snprintf(out->driver, sizeof out->driver, "driver version 0x%x, Vulkan %u.%u.%u", p.driverVersion,
                 VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    }
    /* the largest device-local heap (any heap when none is device-local) */
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    VkDeviceSize local = 0, any = 0;
    for (uint32_t h = 0; h < mp.memoryHeapCount; h++) {
        const VkDeviceSize size = mp.memoryHeaps[h].size;
        any = size > any ? size : any;
        if ((mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && size > local)
            local = size;
    }
    out->memory_bytes = (uint64_t)(local > 0 ? local : any);
}

td_status td_vulkan_device_info(const td_device *device, int index, td_device_info *out)
{
    VkInstance inst;
    TD_TRY(vk_instance_get(&inst));
    uint32_t n = 0;
    VkPhysicalDevice *all = NULL;
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
    if (r == VK_SUCCESS && n > 0) {
        all = td_malloc(sizeof *all * n);
        r = all == NULL ? VK_ERROR_OUT_OF_HOST_MEMORY : vkEnumeratePhysicalDevices(inst, &n, all);
    }
    td_status st = TD_OK;
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        st = vk_fail("device_info", "vkEnumeratePhysicalDevices", r);
    } else {
        /* an open device: find its physical device (TD_VULKAN_DEVICE may have chosen it) */
        int found = device == NULL ? index : -1;
        for (uint32_t i = 0; device != NULL && i < n; i++)
            if (all[i] == vk_of(device)->phys)
                found = (int)i;
        if (found < 0 || (uint32_t)found >= n) {
            st = td_error(TD_E_DEVICE, "device_info: vulkan: no device %d (%u found)", index, n);
        } else {
            out->index = found;
            describe(all[found], out);
        }
    }
    td_free(all);
    vk_instance_put();
    return st;
}

/* The dtypes a device runs in shader arithmetic of their own width (the vtable's
 * dtype_accelerated; td_backend_dtype_usage keeps those the backend stores and computes):
 * f16 with shaderFloat16 (VK_KHR_shader_float16_int8) and 16-bit storage buffers, f64 with
 * shaderFloat64. Cooperative-matrix units are not queried. 0 when there is no such device. */
unsigned td_vulkan_dtype_accelerated(const td_device *device, int index)
{
    VkInstance inst;
    if (vk_instance_get(&inst) != TD_OK) {
        td_clear_error();
        return 0;
    }
    uint32_t n = 0;
    VkPhysicalDevice *all = NULL;
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
    if (r == VK_SUCCESS && n > 0) {
        all = td_malloc(sizeof *all * n);
        r = all == NULL ? VK_ERROR_OUT_OF_HOST_MEMORY : vkEnumeratePhysicalDevices(inst, &n, all);
    }
    unsigned mask = 0;
    int found = device == NULL ? index : -1;
    for (uint32_t i = 0; device != NULL && all != NULL && i < n; i++)
        if (all[i] == vk_of(device)->phys)
            found = (int)i;
    if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && all != NULL && found >= 0 && (uint32_t)found < n) {
        const VkPhysicalDevice phys = all[found];
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(phys, &p);
        VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
        VkPhysicalDevice16BitStorageFeatures s16 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES };
        VkPhysicalDeviceShaderFloat16Int8Features h = { .sType =
                                                            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES };
        if (p.apiVersion >= VK_API_VERSION_1_1) {
            f2.pNext = &s16;
            if (has_extension(phys, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
                s16.pNext = &h;
            vkGetPhysicalDeviceFeatures2(phys, &f2);
        } else {
            vkGetPhysicalDeviceFeatures(phys, &f2.features);
        }
        if (h.shaderFloat16 && s16.storageBuffer16BitAccess)
            mask |= 1u << TD_F16;
        if (f2.features.shaderFloat64)
            mask |= 1u << TD_F64;
    }
    td_free(all);
    vk_instance_put();
    return mask;
}
