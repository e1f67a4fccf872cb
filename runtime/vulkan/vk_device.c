/* Vulkan backend: the shared instance, device open/close, sync and the batching counters. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "vk_internal.h"

/* One VkInstance for every td_device, created with the first and destroyed with the last. */
static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;
static VkInstance instance = VK_NULL_HANDLE;
static long instance_users = 0;

const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver found)";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult error";
    }
}

td_status vk_fail(const char *op, const char *what, VkResult r)
{
    const td_status st =
        (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) ? TD_E_NOMEM : TD_E_DEVICE;
    return td_error(st, "%s: vulkan: %s failed: %s (%d)", op, what, vk_result_name(r), (int)r);
}

static td_status instance_acquire(void)
{
    td_status st = TD_OK;
    pthread_mutex_lock(&instance_lock);
    if (instance_users == 0) {
        const VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                                        .pApplicationName = "tdispatch",
                                        .pEngineName = "tdispatch",
                                        .apiVersion = VK_API_VERSION_1_1 };
        const VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
        const VkResult r = vkCreateInstance(&ci, NULL, &instance);
        if (r != VK_SUCCESS) {
            instance = VK_NULL_HANDLE;
            st = td_error(TD_E_DEVICE, "device_open: vulkan: cannot create a Vulkan instance: %s (%d)",
                          vk_result_name(r), (int)r);
        }
    }
    if (st == TD_OK)
        instance_users++;
    pthread_mutex_unlock(&instance_lock);
    return st;
}

static void instance_release(void)
{
    pthread_mutex_lock(&instance_lock);
    if (instance_users > 0 && --instance_users == 0) {
        vkDestroyInstance(instance, NULL);
        instance = VK_NULL_HANDLE;
    }
    pthread_mutex_unlock(&instance_lock);
}

/* The index reaches us resolved: the core applies TD_VULKAN_DEVICE (td_device_open). */
static td_status device_index(int requested, uint32_t count, uint32_t *out)
{
    if ((unsigned)requested >= count)
        return td_error(TD_E_DEVICE, "device_open: vulkan: no device %d (%u Vulkan device%s found)", requested,
                        count, count == 1 ? "" : "s");
    *out = (uint32_t)requested;
    return TD_OK;
}

static td_status pick_physical(vk_dev *d, int index)
{
    uint32_t count = 0;
    VkResult r = vkEnumeratePhysicalDevices(instance, &count, NULL);
    if (r != VK_SUCCESS)
        return vk_fail("device_open", "vkEnumeratePhysicalDevices", r);
    uint32_t idx = 0;
    TD_TRY(device_index(index, count, &idx));
    VkPhysicalDevice *all = td_malloc(sizeof *all * count);
    if (all == NULL)
        return td_error(TD_E_NOMEM, "device_open: vulkan: out of memory");
    r = vkEnumeratePhysicalDevices(instance, &count, all);
    if (r == VK_SUCCESS || r == VK_INCOMPLETE) {
        if (idx < count)
            d->phys = all[idx];
        else
            r = VK_ERROR_INITIALIZATION_FAILED;
    }
    td_free(all);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return vk_fail("device_open", "vkEnumeratePhysicalDevices", r);

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    if (nq > 16)
        nq = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &nq, qf);
    d->qfam = UINT32_MAX;
    for (uint32_t q = 0; q < nq && d->qfam == UINT32_MAX; q++)
        if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT)
            d->qfam = q;
    if (d->qfam == UINT32_MAX)
        return td_error(TD_E_DEVICE, "device_open: vulkan: device %u has no compute queue", idx);

    /* The one place that picks storage memory: host-visible and coherent, so the read/write
     * hooks map it directly; also device-local when such a type has a large heap (integrated
     * GPUs, lavapipe, resizable BAR), not a 256 MiB BAR window of a discrete GPU. */
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(d->phys, &mp);
    const VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    d->mem_type = UINT32_MAX;
    for (uint32_t m = 0; m < mp.memoryTypeCount; m++) {
        const VkMemoryPropertyFlags f = mp.memoryTypes[m].propertyFlags;
        if ((f & need) != need)
            continue;
        const bool big_local = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
                               mp.memoryHeaps[mp.memoryTypes[m].heapIndex].size >= ((VkDeviceSize)1 << 30);
        if (d->mem_type == UINT32_MAX || big_local)
            d->mem_type = m;
        if (big_local)
            break;
    }
    if (d->mem_type == UINT32_MAX)
        return td_error(TD_E_DEVICE, "device_open: vulkan: device %u has no host-visible coherent memory", idx);

    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d->phys, &props);
    for (int k = 0; k < 3; k++)
        d->max_groups[k] = props.limits.maxComputeWorkGroupCount[k];
    d->max_range = props.limits.maxStorageBufferRange;
    d->software = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    d->max_shared = props.limits.maxComputeSharedMemorySize;
    d->param_align = props.limits.minStorageBufferOffsetAlignment;
    if (d->param_align < VK_MAX_PARAMS * 4u)
        d->param_align = VK_MAX_PARAMS * 4u;
    return TD_OK;
}

static td_status create_objects(vk_dev *d)
{
    const float prio = 1.0f;
    const VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                          .queueFamilyIndex = d->qfam,
                                          .queueCount = 1,
                                          .pQueuePriorities = &prio };
    /* Only what the shaders use: 16-bit storage buffers (the f16 / bf16 shaders' uint16_t
     * form) and doubles, where the device has them (Vulkan 1.1 core queries). */
    VkPhysicalDevice16BitStorageFeatures s16 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16 };
    vkGetPhysicalDeviceFeatures2(d->phys, &f2);
    d->has_s16 = s16.storageBuffer16BitAccess == VK_TRUE;
    d->has_f64 = f2.features.shaderFloat64 == VK_TRUE;
    VkPhysicalDevice16BitStorageFeatures s16_on = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                    .storageBuffer16BitAccess = d->has_s16 ? VK_TRUE : VK_FALSE };
    VkPhysicalDeviceFeatures2 on = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16_on };
    on.features.shaderFloat64 = d->has_f64 ? VK_TRUE : VK_FALSE;
    const char *hs = getenv("TD_VULKAN_HALF_STORAGE");
    d->use_s16 = d->has_s16 && !(hs != NULL && strcmp(hs, "packed") == 0);
    const VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                     .pNext = &on,
                                     .queueCreateInfoCount = 1,
                                     .pQueueCreateInfos = &qci };
    VkResult r = vkCreateDevice(d->phys, &dci, NULL, &d->dev);
    if (r != VK_SUCCESS) {
        d->dev = VK_NULL_HANDLE;
        return vk_fail("device_open", "vkCreateDevice", r);
    }
    vkGetDeviceQueue(d->dev, d->qfam, 0, &d->queue);

    const VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                          .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                          .queueFamilyIndex = d->qfam };
    if ((r = vkCreateCommandPool(d->dev, &pci, NULL, &d->cpool)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreateCommandPool", r);
    const VkCommandBufferAllocateInfo cai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                              .commandPool = d->cpool,
                                              .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                              .commandBufferCount = 1 };
    if ((r = vkAllocateCommandBuffers(d->dev, &cai, &d->cmd)) != VK_SUCCESS)
        return vk_fail("device_open", "vkAllocateCommandBuffers", r);
    const VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    if ((r = vkCreateFence(d->dev, &fci, NULL, &d->fence)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreateFence", r);

    VkDescriptorSetLayoutBinding b[5];
    for (uint32_t k = 0; k < 5; k++)
        b[k] = (VkDescriptorSetLayoutBinding){ .binding = k,
                                               .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               .descriptorCount = 1,
                                               .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
    const VkDescriptorSetLayoutCreateInfo lci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                  .bindingCount = 5,
                                                  .pBindings = b };
    if ((r = vkCreateDescriptorSetLayout(d->dev, &lci, NULL, &d->dsl)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreateDescriptorSetLayout", r);
    const VkPipelineLayoutCreateInfo plci = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                              .setLayoutCount = 1,
                                              .pSetLayouts = &d->dsl };
    if ((r = vkCreatePipelineLayout(d->dev, &plci, NULL, &d->playout)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreatePipelineLayout", r);
    const VkDescriptorPoolSize ps = { .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .descriptorCount = 5 * VK_BATCH_MAX };
    const VkDescriptorPoolCreateInfo dpci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                              .maxSets = VK_BATCH_MAX,
                                              .poolSizeCount = 1,
                                              .pPoolSizes = &ps };
    if ((r = vkCreateDescriptorPool(d->dev, &dpci, NULL, &d->dpool)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreateDescriptorPool", r);
    const VkPipelineCacheCreateInfo cci = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
    if ((r = vkCreatePipelineCache(d->dev, &cci, NULL, &d->pcache)) != VK_SUCCESS)
        return vk_fail("device_open", "vkCreatePipelineCache", r);

    TD_TRY(vk_buf_raw(d, "device_open", d->param_align * VK_BATCH_MAX, &d->params));
    TD_TRY(vk_buf_raw(d, "device_open", 256, &d->dummy));
    return TD_OK;
}

static void destroy_objects(vk_dev *d)
{
    if (d->dev == VK_NULL_HANDLE)
        return;
    vkDeviceWaitIdle(d->dev);
    vk_pool_release(d);
    if (d->params)
        vk_buf_destroy(d, d->params);
    if (d->dummy)
        vk_buf_destroy(d, d->dummy);
    vk_dispatch_release(d);
    if (d->pcache)
        vkDestroyPipelineCache(d->dev, d->pcache, NULL);
    if (d->dpool)
        vkDestroyDescriptorPool(d->dev, d->dpool, NULL);
    if (d->playout)
        vkDestroyPipelineLayout(d->dev, d->playout, NULL);
    if (d->dsl)
        vkDestroyDescriptorSetLayout(d->dev, d->dsl, NULL);
    if (d->fence)
        vkDestroyFence(d->dev, d->fence, NULL);
    if (d->cpool)
        vkDestroyCommandPool(d->dev, d->cpool, NULL); /* frees the command buffer */
    vkDestroyDevice(d->dev, NULL);
    d->dev = VK_NULL_HANDLE;
}

/* The device's lock (vk_internal.h): recursive. TD_VULKAN_DEVICE_LOCK=0 leaves it unused, so
 * that bench_vulkan can measure what it costs; such a device is for one thread at a time. */
static td_status lock_init(vk_dev *d)
{
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0)
        return td_error(TD_E_NOMEM, "device_open: vulkan: cannot create the device lock");
    int rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    if (rc == 0)
        rc = pthread_mutex_init(&d->lock, &attr);
    (void)pthread_mutexattr_destroy(&attr);
    if (rc != 0)
        return td_error(TD_E_NOMEM, "device_open: vulkan: cannot create the device lock (%d)", rc);
    const char *env = getenv("TD_VULKAN_DEVICE_LOCK");
    d->locking = !(env != NULL && strcmp(env, "0") == 0);
    return TD_OK;
}

td_status td_vulkan_device_open(td_device *device)
{
    vk_dev *d = td_calloc(1, sizeof *d);
    if (d == NULL)
        return td_error(TD_E_NOMEM, "device_open: vulkan: out of memory");
    td_status st = instance_acquire();
    if (st != TD_OK) {
        td_free(d);
        return st;
    }
    st = lock_init(d);
    if (st != TD_OK) {
        td_free(d);
        instance_release();
        return st;
    }
    st = pick_physical(d, td_be_device_index(device));
    if (st == TD_OK)
        st = create_objects(d);
    if (st != TD_OK) {
        destroy_objects(d);
        (void)pthread_mutex_destroy(&d->lock);
        td_free(d);
        instance_release();
        return st;
    }
    td_be_device_set_state(device, d);
    return TD_OK;
}

void td_vulkan_device_close(td_device *device)
{
    vk_dev *d = vk_of(device);
    if (d == NULL)
        return;
    if (d->recording)
        (void)vk_flush(d, "device_close");
    destroy_objects(d);
    (void)pthread_mutex_destroy(&d->lock);
    td_free(d);
    td_be_device_set_state(device, NULL);
    instance_release();
}

td_status td_vulkan_sync(td_device *device)
{
    return vk_flush(vk_of(device), "sync");
}

td_status td_vulkan_stats(const td_device *d, long *submits, long *dispatches)
{
    if (d == NULL)
        return td_err_null("vulkan_stats", "d");
    if (td_be_device_backend(d) == TD_BACKEND_AUTODIFF && td_be_device_inner(d) != NULL)
        d = td_be_device_inner(d);
    if (td_be_device_backend(d) != TD_BACKEND_VULKAN || td_be_device_state(d) == NULL)
        return td_error(TD_E_BACKEND_MISMATCH, "vulkan_stats: vulkan: device is on backend '%s', not 'vulkan'",
                        td_backend_name(td_be_device_backend(d)));
    vk_dev *v = vk_of(d);
    vk_lock(v);
    if (submits)
        *submits = v->submits;
    if (dispatches)
        *dispatches = v->dispatches;
    vk_unlock(v);
    return TD_OK;
}

td_status td_vulkan_set_matmul_kernel(td_device *d, td_vulkan_matmul_kernel kernel)
{
    if (d == NULL)
        return td_err_null("vulkan_set_matmul_kernel", "d");
    if (td_be_device_backend(d) == TD_BACKEND_AUTODIFF && td_be_device_inner(d) != NULL)
        d = td_be_device_inner(d);
    if (td_be_device_backend(d) != TD_BACKEND_VULKAN || td_be_device_state(d) == NULL)
        return td_error(TD_E_BACKEND_MISMATCH, "vulkan_set_matmul_kernel: vulkan: device is on backend '%s', not "
                        "'vulkan'", td_backend_name(td_be_device_backend(d)));
    if ((int)kernel < TD_VULKAN_MATMUL_AUTO || (int)kernel > TD_VULKAN_MATMUL_OUTER)
        return td_error(TD_E_INVALID, "vulkan_set_matmul_kernel: unknown kernel %d", (int)kernel);
    vk_of(d)->matmul_kernel = (int)kernel;
    return TD_OK;
}

td_status td_vulkan_set_elementwise_kernel(td_device *d, td_vulkan_elementwise_kernel kernel)
{
    if (d == NULL)
        return td_err_null("vulkan_set_elementwise_kernel", "d");
    if (td_be_device_backend(d) == TD_BACKEND_AUTODIFF && td_be_device_inner(d) != NULL)
        d = td_be_device_inner(d);
    if (td_be_device_backend(d) != TD_BACKEND_VULKAN || td_be_device_state(d) == NULL)
        return td_error(TD_E_BACKEND_MISMATCH, "vulkan_set_elementwise_kernel: vulkan: device is on backend '%s', "
                        "not 'vulkan'", td_backend_name(td_be_device_backend(d)));
    if ((int)kernel < TD_VULKAN_ELEMENTWISE_AUTO || (int)kernel > TD_VULKAN_ELEMENTWISE_GENERIC)
        return td_error(TD_E_INVALID, "vulkan_set_elementwise_kernel: unknown kernel %d", (int)kernel);
    vk_of(d)->ew_kernel = (int)kernel;
    return TD_OK;
}

/* The shared instance for enumerating devices without opening one (vk_info.c). */
td_status vk_instance_get(VkInstance *out)
{
    const td_status st = instance_acquire();
    *out = st == TD_OK ? instance : VK_NULL_HANDLE;
    return st;
}

void vk_instance_put(void)
{
    instance_release();
}

static td_status vk_device_of(const char *op, td_device **d)
{
    if (*d == NULL)
        return td_err_null(op, "d");
    if (td_be_device_backend(*d) == TD_BACKEND_AUTODIFF && td_be_device_inner(*d) != NULL)
        *d = td_be_device_inner(*d);
    if (td_be_device_backend(*d) != TD_BACKEND_VULKAN || td_be_device_state(*d) == NULL)
        return td_error(TD_E_BACKEND_MISMATCH, "%s: vulkan: device is on backend '%s', not 'vulkan'", op,
                        td_backend_name(td_be_device_backend(*d)));
    return TD_OK;
}

td_status td_vulkan_set_half_storage(td_device *d, td_vulkan_half_storage mode)
{
    static const char op[] = "vulkan_set_half_storage";
    TD_TRY(vk_device_of(op, &d));
    if ((int)mode < TD_VULKAN_HALF_AUTO || (int)mode > TD_VULKAN_HALF_PACKED)
        return td_error(TD_E_INVALID, "%s: unknown mode %d", op, (int)mode);
    vk_dev *v = vk_of(d);
    vk_lock(v);
    v->use_s16 = v->has_s16 && mode == TD_VULKAN_HALF_AUTO;
    vk_unlock(v);
    return TD_OK;
}

td_status td_vulkan_half_storage_in_use(const td_device *d, bool *uses_16bit)
{
    static const char op[] = "vulkan_half_storage_in_use";
    if (uses_16bit == NULL)
        return td_err_null(op, "uses_16bit");
    td_device *dd = (td_device *)d;
    TD_TRY(vk_device_of(op, &dd));
    vk_dev *v = vk_of(dd);
    vk_lock(v);
    *uses_16bit = v->use_s16;
    vk_unlock(v);
    return TD_OK;
}
